// Run as a child process by the lifecycle tests: a script with nothing else to do starts a
// browser and closes it. close() must resolve (and the script then end by itself, code 0).
import { Deckhand } from "deckhand";
import { browserProcess, testOptions } from "./browser.ts";

const dh = new Deckhand(testOptions());
await dh.init();
const { profile } = await browserProcess(dh);
console.log(`PROFILE ${profile}`);
await dh.close();
console.log("CLOSED");
