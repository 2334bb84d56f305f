// Logging in with variables: the email and password are %user% and %password% in the
// instructions; their values are typed into the page but never reach a model, a log, the history
// or a result. These instructions are explicit, so no model is needed.
//
// Run: node scripts/setup.mjs --run examples/login-with-variables.ts

import { Deckhand } from "deckhand";
import { pageUrl, QUIET } from "./support.ts";

const variables = {
  user: "ada@example.com",
  password: {
    value: process.env.EXAMPLE_PASSWORD ?? "correct horse battery",
    description: "the account password",
  },
};

const dh = new Deckhand({ env: "LOCAL", verbose: 0, localBrowserLaunchOptions: QUIET });
await dh.init();
try {
  await dh.page.goto(pageUrl("login.html"));
  for (const instruction of [
    "type %user% into the Email field",
    "type %password% into the Password field",
    "check Remember me",
    "click Sign in",
  ]) {
    const result = await dh.act(instruction, { variables });
    console.log(`${result.success ? "ok" : "FAILED"}: ${result.message}`);
  }
  console.log(await dh.page.locator("#greeting").textContent());
  // The history has the names, never the values.
  const history = JSON.stringify(await dh.history);
  console.log(`history mentions the password: ${history.includes(variables.password.value)}`);
} finally {
  await dh.close();
}
