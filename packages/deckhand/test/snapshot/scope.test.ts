// `selector` narrows a snapshot to one subtree and `ignoreSelectors` removes subtrees, in every
// kind of frame and shadow root.

import { ServiceElementNotFoundError } from "deckhand";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type BrowserFixture, browserFixture } from "../support/browser.ts";

let fx: BrowserFixture;
beforeAll(async () => {
  fx = await browserFixture();
});
afterAll(async () => {
  await fx?.close();
});

async function open(path: string) {
  await fx.dh.page.goto(fx.site.url(path));
}

async function pageText(options: { selector?: string; ignoreSelectors?: string[] } = {}): Promise<string> {
  return (await fx.dh.extract(options)).pageText;
}

describe("selector", () => {
  test("CSS narrows to a subtree of the main document", async () => {
    await open("login-small.html");
    const text = await pageText({ selector: "nav" });
    expect(text).toContain("link: Pricing");
    expect(text).not.toContain("Sign in");
    expect(text).not.toContain("Acme Cloud");
  });

  test("XPath narrows too", async () => {
    await open("login-small.html");
    const text = await pageText({ selector: "//form" });
    expect(text).toContain("textbox: Email");
    expect(text).not.toContain("Pricing");
  });

  test("`>>` narrows to a subtree inside a cross-site (out-of-process) iframe", async () => {
    await open("frames/cross-site.html");
    const text = await pageText({ selector: "iframe#pay >> body" });
    expect(text).toContain("button: Child button");
    expect(text).toContain("127.0.0.2");
    expect(text).not.toContain("Checkout");
  });

  test("an XPath through iframe steps narrows inside nested cross-site frames", async () => {
    await open("frames/nested-cross.html");
    const text = await pageText({ selector: "//iframe[@id='outer']//iframe[@id='inner']/html/body" });
    expect(text).toContain("127.0.0.3");
    expect(text).not.toContain("Middle frame");
  });

  test("a subtree inside a srcdoc frame", async () => {
    await open("frames/srcdoc.html");
    const text = await pageText({ selector: "iframe >> button" });
    expect(text.trim()).toMatch(/^\[\d+\] button: Srcdoc button$/);
  });

  test("a subtree inside an open shadow root", async () => {
    await open("shadow/open.html");
    const text = await pageText({ selector: "button" });
    expect(text.trim()).toMatch(/button: Open shadow button$/);
  });

  test("a subtree inside a closed shadow root", async () => {
    await open("shadow/closed.html");
    const text = await pageText({ selector: "input" });
    expect(text.trim()).toMatch(/textbox: Closed shadow input$/);
  });

  test("a scoped subtree that holds an iframe includes the frame", async () => {
    await open("frames/mixed.html");
    const text = await pageText({ selector: "#cross" });
    expect(text).toContain("iframe: Cross-site child");
    expect(text).toContain("button: Child button");
    expect(text).not.toContain("Srcdoc");
  });

  test("a selector that matches nothing raises ServiceElementNotFoundError naming it", async () => {
    await open("index.html");
    const error = await pageText({ selector: "#no-such-thing" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceElementNotFoundError);
    expect((error as Error).message).toContain("#no-such-thing");
    const xpathError = await pageText({ selector: "//section[@id='nope']" }).catch((e: unknown) => e);
    expect(xpathError).toBeInstanceOf(ServiceElementNotFoundError);
    expect((xpathError as Error).message).toContain("//section[@id='nope']");
  });
});

describe("ignoreSelectors", () => {
  test("CSS removes every matching subtree in the main document", async () => {
    await open("login-small.html");
    const text = await pageText({ ignoreSelectors: ["nav", "footer"] });
    expect(text).not.toContain("Pricing");
    expect(text).not.toContain("Privacy");
    expect(text).toContain("Sign in");
  });

  test("removing an iframe removes its whole frame (and the frames inside it)", async () => {
    await open("frames/mixed.html");
    const text = await pageText({ ignoreSelectors: ["#nested"] });
    expect(text).not.toContain("Nested cross-site");
    expect(text).not.toContain("127.0.0.3");
    expect(text).toContain("Cross-site child");
  });

  test("CSS applies inside out-of-process frames too", async () => {
    await open("frames/cross-site.html");
    const text = await pageText({ ignoreSelectors: ["#where"] });
    expect(text).toContain("button: Child button");
    expect(text).toContain("Served from");
    expect(text).not.toContain("127.0.0.2");
  });

  test("a `>>` selector removes one element inside one frame only", async () => {
    await open("frames/mixed.html");
    const text = await pageText({ ignoreSelectors: ["#cross >> button"] });
    const buttons = text.split("\n").filter((l) => l.includes("button: Child button"));
    expect(buttons).toHaveLength(2); // the same-origin and the nested ones remain
  });

  test("an element inside a closed shadow root", async () => {
    await open("shadow/closed.html");
    const text = await pageText({ ignoreSelectors: ["button"] });
    expect(text).not.toContain("Closed shadow button");
    expect(text).toContain("Closed shadow input");
  });

  test("a subtree in nested shadow roots", async () => {
    await open("shadow/nested.html");
    const text = await pageText({ ignoreSelectors: ["button"] });
    expect(text).not.toContain("Deep button");
  });

  test("an XPath selector", async () => {
    await open("list.html");
    const text = await pageText({ ignoreSelectors: ["//ul"] });
    expect(text).not.toContain("Apple");
    expect(text).toContain("Preheat the oven");
  });
});
