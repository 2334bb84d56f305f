// A program whose Deckhand logs with the default logger (stderr): argv[2] is the logFormat option
// ("unset" for none), argv[3] a page to open. It types a secret variable and clicks, explicitly.
import { Deckhand } from "deckhand";

const format = process.argv[2];
const dh = new Deckhand({
  env: "LOCAL",
  verbose: 1,
  ...(format && format !== "unset" ? { logFormat: format as "auto" | "pretty" | "json" } : {}),
  localBrowserLaunchOptions: {
    args: ["--disable-background-networking", "--disable-component-update", "--no-first-run"],
  },
});
await dh.init();
try {
  await dh.page.goto(process.argv[3]!);
  await dh.act("type %password% into the Password field", { variables: { password: "hunter2-log-secret" } });
  await dh.act("click the Sign in button");
} finally {
  await dh.close();
}
