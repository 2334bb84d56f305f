import { mkdtemp, rm } from "node:fs/promises";
import { Deckhand } from "deckhand";
import { benchOptions } from "./support/browser.ts";
const dir = await mkdtemp("/tmp/perf/probe/own-");
for (let i = 0; i < 5; i++) {
  for (const own of [true, false]) {
    const dh = new Deckhand(benchOptions(own ? { localBrowserLaunchOptions: { userDataDir: dir } } : {}));
    await dh.init();
    await dh.page.goto("about:blank");
    const b = dh.context.browser;
    const launched = b.launched!;
    const t0 = performance.now();
    if (own) {
      await (b as any).connection.root.send("Browser.close").catch(() => undefined);
      const t1 = performance.now();
      await launched.browserExited(5000);
      const t2 = performance.now();
      b.disconnect();
      await launched.kill();
      const t3 = performance.now();
      await dh.close();
      console.log(`own: Browser.close ${(t1 - t0).toFixed(1)} exit ${(t2 - t1).toFixed(1)} kill ${(t3 - t2).toFixed(1)} total ${(performance.now() - t0).toFixed(1)}`);
    } else {
      b.disconnect();
      const t1 = performance.now();
      await launched.kill();
      const t2 = performance.now();
      await dh.close();
      console.log(`tmp: disconnect ${(t1 - t0).toFixed(1)} kill ${(t2 - t1).toFixed(1)} total ${(performance.now() - t0).toFixed(1)}`);
    }
  }
}
await rm(dir, { recursive: true, force: true });
