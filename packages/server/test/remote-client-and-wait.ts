// A REMOTE Deckhand client in a process of its own, for the test of a client that is killed
// (sessions.test.ts): it starts a session on the service named by DECKHAND_TEST_URL, prints
// "SESSION <id>", and waits to be killed.

import { Deckhand } from "deckhand";

const dh = new Deckhand({
  env: "REMOTE",
  apiUrl: process.env.DECKHAND_TEST_URL!,
  apiKey: process.env.DECKHAND_TEST_KEY!,
  verbose: 0,
  disablePino: true,
});
await dh.init();
process.stdout.write(`SESSION ${dh.sessionId}\n`);
setInterval(() => {}, 60_000);
