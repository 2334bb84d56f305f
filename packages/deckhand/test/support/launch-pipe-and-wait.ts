// Run as a child process by the pipe transport tests: launches a browser with no debugging port,
// drives it over its pipe, prints its profile directory, then waits to be killed.
import { Browser, launchChrome } from "deckhand";
import { QUIET_ARGS } from "./browser.ts";

const launched = await launchChrome({ headless: true, debuggingPort: false, args: QUIET_ARGS });
const browser = await Browser.connect(launched);
await browser.defaultContext().newPage();
console.log(`PROFILE ${launched.userDataDir}`);
setInterval(() => {}, 60_000);
