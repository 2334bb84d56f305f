import { takeSnapshot } from "deckhand";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type BrowserFixture, browserFixture } from "../support/browser.ts";

let fx: BrowserFixture;
beforeAll(async () => {
  fx = await browserFixture();
});
afterAll(async () => {
  await fx?.close();
});

describe("the token budget", () => {
  test("a page over budget is cut to fit, keeps its structure and the instruction's target, and says so", async () => {
    const page = fx.dh.page;
    await page.goto(fx.site.url("/generated/large?elements=5000"));
    const full = await takeSnapshot(page, { tokenBudget: false });
    const cut = await takeSnapshot(page, { tokenBudget: 4_000, instruction: "click the target button" });
    expect(full.truncated).toBe(false);
    expect(countTokens(full.text)).toBeGreaterThan(4_000);
    expect(cut.truncated).toBe(true);
    expect(countTokens(cut.text)).toBeLessThanOrEqual(4_000);
    expect(cut.text).toMatch(/\[\d+\] button: Target button/);
    expect(cut.text).toContain("outline cut to fit the token budget");
    expect(cut.text).toMatch(/… \d+ lines omitted/);
    // Structure: the landmarks and headings survive.
    for (const line of ["table: Records", "navigation: Documentation", "heading: Records"])
      expect(cut.text).toContain(line);
    // The ids that are kept are the same ids as in the full outline (a cut does not renumber).
    const id = Number(/\[(\d+)\] button: Target button/.exec(cut.text)![1]);
    expect(full.text).toContain(`[${id}] button: Target button`);
    expect((await cut.element(id)).name).toBe("Target button");
  });

  test("the instruction decides what is kept", async () => {
    const page = fx.dh.page;
    await page.goto(fx.site.url("/generated/large?elements=5000"));
    const full = await takeSnapshot(page, { tokenBudget: false });
    const wanted = full.text
      .split("\n")
      .find((l) => /button: \w+ \w+ 700$/.test(l))!
      .trim();
    const label = wanted.slice(wanted.indexOf(": ") + 2);
    const cut = await takeSnapshot(page, { tokenBudget: 2_000, instruction: `press ${label}` });
    expect(cut.text).toContain(wanted);
  });

  test("a 20,000-element page fits the default budget with the target present", async () => {
    const page = fx.dh.page;
    await page.goto(fx.site.url("/generated/large?elements=20000"));
    const snapshot = await takeSnapshot(page, { instruction: "click the target button" });
    expect(snapshot.truncated).toBe(true);
    expect(countTokens(snapshot.text)).toBeLessThanOrEqual(24_000);
    expect(snapshot.text).toMatch(/button: Target button/);
  });

  test("a small page is never cut", async () => {
    await fx.dh.page.goto(fx.site.url("login-small.html"));
    const snapshot = await takeSnapshot(fx.dh.page, { tokenBudget: 24_000 });
    expect(snapshot.truncated).toBe(false);
    expect(snapshot.text).not.toContain("omitted");
  });
});

describe("waiting for the DOM to settle", () => {
  test("a page that keeps changing for a while is read once it stops", async () => {
    await fx.dh.page.goto(fx.site.url("dynamic.html"));
    const { pageText } = await fx.dh.extract();
    expect(pageText).toContain("settled");
    expect(pageText).toContain("Late content");
    expect(pageText).not.toContain("mutating");
  });

  test("a page that never stops changing (an animation) is not waited for until the bound", async () => {
    const off = fx.site.route("/endless.html", (_req, res) => {
      res.setHeader("content-type", "text/html");
      res.end(
        `<!doctype html><title>Endless</title><p id="t">0</p><script>let n = 0; setInterval(() => { document.getElementById("t").textContent = String(++n); }, 16);</script>`,
      );
    });
    try {
      const page = fx.dh.page;
      await page.goto(fx.site.url("/endless.html"));
      const started = Date.now();
      const snapshot = await takeSnapshot(page, { domSettleTimeout: 20_000 });
      expect(snapshot.text).toMatch(/^\d+$/m);
      // Well under the 20 s bound: the settle gave up on the animation after about two seconds.
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      off();
    }
  });

  test("domSettleTimeout bounds the wait for a request that never finishes", async () => {
    const off = fx.site.route("/hang", () => {
      // never answers
    });
    const page = fx.dh.page;
    await page.goto(fx.site.url("index.html"));
    try {
      await page.evaluate(
        `fetch("/hang").catch(() => {}); document.body.insertAdjacentHTML("beforeend", "<p>after fetch</p>")`,
      );
      const snapshot = await takeSnapshot(page, { domSettleTimeout: 300 });
      expect(snapshot.text).toContain("after fetch");
    } finally {
      off();
      await page.goto("about:blank");
    }
  });
});
