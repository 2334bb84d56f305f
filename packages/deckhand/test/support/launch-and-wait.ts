// Run as a child process by the lifecycle tests: launches a browser, prints its profile directory,
// then waits to be killed.
import { Deckhand } from "deckhand";
import { browserProcess, testOptions } from "./browser.ts";

const dh = new Deckhand(testOptions());
await dh.init();
const { profile } = await browserProcess(dh);
console.log(`PROFILE ${profile}`);
setInterval(() => {}, 60_000);
