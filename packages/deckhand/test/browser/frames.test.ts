// Frames: same-origin, srcdoc, nested, and cross-site ones that Chromium runs in other processes
// (127.0.0.2 and 127.0.0.3 beside 127.0.0.1). Checks that the cross-site ones really are separate
// targets, and that deepLocator reaches into all of them, with `>>` and with XPath iframe steps.

import { DEFAULT_VIEWPORT, type Frame, type Page } from "deckhand";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import {
  type BrowserFixture,
  closeFixture,
  closeOtherPages,
  eventually,
  openFixture,
  visit,
} from "./helpers.ts";

let fx: BrowserFixture;
let firstPage: Page;

beforeAll(async () => {
  fx = await openFixture();
  firstPage = fx.dh.context.pages()[0]!;
});

afterEach(async () => {
  await closeOtherPages(fx, firstPage);
});

/** The file's one tab, on a fresh document of `path`. */
const show = (path: string) => visit(fx, firstPage, path);

afterAll(async () => {
  await closeFixture(fx);
});

interface TargetInfo {
  targetId: string;
  type: string;
  url: string;
}

/** Target.getTargets asked over a WebSocket of its own, not through Deckhand's connection. */
async function browserTargets(): Promise<TargetInfo[]> {
  const socket = new WebSocket(fx.dh.connectURL());
  try {
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    return await new Promise<TargetInfo[]>((resolve, reject) => {
      socket.on("message", (data) => {
        const message = JSON.parse(String(data)) as { id?: number; result?: { targetInfos: TargetInfo[] } };
        if (message.id === 1 && message.result) resolve(message.result.targetInfos);
      });
      socket.once("error", reject);
      socket.send(JSON.stringify({ id: 1, method: "Target.getTargets" }));
    });
  } finally {
    socket.close();
  }
}

/** The frame of `page` showing `url`, once the page knows it (frames load after the page). */
async function frameAt(page: Page, url: string): Promise<Frame> {
  const frame = await eventually(
    async () => page.frames().find((f) => f.url === url),
    (f) => f?.hasDocument === true,
  );
  if (!frame) throw new Error(`no frame at ${url}; frames: ${page.frames().map((f) => f.url)}`);
  return frame;
}

const childResult = (frame: Frame) =>
  frame.evaluate(() => document.getElementById("child-result")?.textContent);

describe("cross-site frames", () => {
  it("are separate targets of the browser", async () => {
    const page = await show("frames/cross-site.html");
    const childUrl = fx.site.crossUrl("frames/child.html");
    await frameAt(page, childUrl);
    const targets = await browserTargets();
    expect(targets.filter((t) => t.type === "iframe").map((t) => t.url)).toContain(childUrl);
  });

  it("have a protocol session of their own and say they are out of process", async () => {
    const page = await show("frames/cross-site.html");
    const frame = await frameAt(page, fx.site.crossUrl("frames/child.html"));
    expect(frame.isOutOfProcess).toBe(true);
    expect(frame.session).not.toBe(page.session);
    expect(frame.parent).toBe(page.mainFrame());
  });

  it("run scripts in the other site's document", async () => {
    const page = await show("frames/cross-site.html");
    const frame = await frameAt(page, fx.site.crossUrl("frames/child.html"));
    expect(await frame.evaluate(() => location.host)).toBe(new URL(fx.site.crossOrigin).host);
  });

  it("nest two deep, each in its own process: 127.0.0.1 > 127.0.0.2 > 127.0.0.3", async () => {
    const page = await show("frames/nested-cross.html");
    const middle = await frameAt(page, fx.site.crossUrl("frames/cross-middle.html"));
    const inner = await frameAt(page, fx.site.thirdUrl("frames/child.html"));
    expect(inner.parent).toBe(middle);
    expect(middle.parent).toBe(page.mainFrame());
    expect(middle.isOutOfProcess).toBe(true);
    expect(inner.isOutOfProcess).toBe(true);
    expect(new Set([page.session, middle.session, inner.session]).size).toBe(3);
    const iframeTargets = (await browserTargets()).filter((t) => t.type === "iframe").map((t) => t.url);
    expect(iframeTargets).toEqual(expect.arrayContaining([middle.url, inner.url]));
  });

  it("are reached by deepLocator across `>>`: the click runs the frame's handler", async () => {
    const page = await show("frames/cross-site.html");
    await page.deepLocator("iframe#pay >> #child-button").click();
    const frame = await frameAt(page, fx.site.crossUrl("frames/child.html"));
    expect(await childResult(frame)).toBe("child clicked");
  });

  it("take filled text through deepLocator", async () => {
    const page = await show("frames/cross-site.html");
    await page.deepLocator("iframe#pay >> #child-input").fill("4242 4242");
    expect(await page.deepLocator("iframe#pay >> #child-input").inputValue()).toBe("4242 4242");
    const frame = await frameAt(page, fx.site.crossUrl("frames/child.html"));
    expect(
      await frame.evaluate(() => (document.getElementById("child-input") as HTMLInputElement).value),
    ).toBe("4242 4242");
  });

  it("take typed keys through deepLocator", async () => {
    const page = await show("frames/cross-site.html");
    await page.deepLocator("iframe#pay >> #child-input").type("abc");
    expect(await page.deepLocator("iframe#pay >> #child-input").inputValue()).toBe("abc");
  });

  it("are reached two deep by deepLocator", async () => {
    const page = await show("frames/nested-cross.html");
    const where = page.deepLocator("#outer >> #inner >> #where");
    expect(await where.textContent()).toBe(new URL(fx.site.thirdOrigin).host);
    await page.deepLocator("#outer >> #inner >> #child-button").click();
    expect(await page.deepLocator("#outer >> #inner >> #child-result").textContent()).toBe("child clicked");
  });

  it("report boxes in the top page's viewport, offset by their iframe", async () => {
    const page = await show("frames/cross-site.html");
    const iframe = (await page.locator("iframe#pay").boundingBox())!;
    const frame = await frameAt(page, fx.site.crossUrl("frames/child.html"));
    const inner = await frame.evaluate(() => {
      const r = document.getElementById("child-button")!.getBoundingClientRect();
      return { x: r.x, y: r.y, width: r.width, height: r.height };
    });
    const box = (await page.deepLocator("iframe#pay >> #child-button").boundingBox())!;
    // The iframe's default 2px border sits between its box and its content.
    expect(box.x).toBeCloseTo(iframe.x + 2 + inner.x, 1);
    expect(box.y).toBeCloseTo(iframe.y + 2 + inner.y, 1);
    expect(box.width).toBeCloseTo(inner.width, 1);
  });

  it("are clicked after scrolling the top page to them", async () => {
    const page = await show("frames/mixed.html");
    // Small enough that the nested frame starts below the fold.
    await page.setViewportSize(780, 437);
    try {
      await page.deepLocator("#nested >> #inner >> #child-button").click();
      expect(await page.deepLocator("#nested >> #inner >> #child-result").textContent()).toBe(
        "child clicked",
      );
      expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
    } finally {
      await page.setViewportSize(DEFAULT_VIEWPORT.width, DEFAULT_VIEWPORT.height);
    }
  });

  it("are not clicked through something that covers their iframe: ServiceClickError says what", async () => {
    const page = await show("frames/cross-site.html");
    await page.evaluate(() => {
      const r = document.getElementById("pay")!.getBoundingClientRect();
      const cover = document.createElement("div");
      cover.id = "frame-cover";
      Object.assign(cover.style, {
        position: "fixed",
        left: `${r.left}px`,
        top: `${r.top}px`,
        width: `${r.width}px`,
        height: `${r.height}px`,
      });
      document.body.append(cover);
    });
    const error = await page
      .deepLocator("iframe#pay >> #child-button")
      .click({ timeout: 500 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceClickError" });
    expect((error as Error).message).toContain('id="frame-cover"');
    const frame = await frameAt(page, fx.site.crossUrl("frames/child.html"));
    expect(await childResult(frame)).toBe("");
  });

  it("that the page adds later are waited for", async () => {
    const page = await show("frames/late.html");
    await page.deepLocator("#late >> #child-button").click({ timeout: 5_000 });
    expect(await page.deepLocator("#late >> #child-result").textContent()).toBe("child clicked");
  });

  it("stay reachable after the frame navigates to another site", async () => {
    const page = await show("frames/cross-site.html");
    await frameAt(page, fx.site.crossUrl("frames/child.html"));
    await page.evaluate((url: string) => {
      (document.getElementById("pay") as HTMLIFrameElement).src = url;
    }, fx.site.thirdUrl("frames/child.html"));
    const where = page.deepLocator("iframe#pay >> #where");
    const host = await eventually(
      () => where.textContent().catch(() => null),
      (text) => text === new URL(fx.site.thirdOrigin).host,
    );
    expect(host).toBe(new URL(fx.site.thirdOrigin).host);
    await page.deepLocator("iframe#pay >> #child-button").click();
    expect(await page.deepLocator("iframe#pay >> #child-result").textContent()).toBe("child clicked");
  });
});

describe("same-process frames", () => {
  it("a same-origin frame shares the page's session and is not a target of its own", async () => {
    const page = await show("frames/same-origin.html");
    const frame = await frameAt(page, fx.site.url("frames/child.html"));
    expect(frame.isOutOfProcess).toBe(false);
    expect(frame.session).toBe(page.session);
    const targets = await browserTargets();
    expect(targets.filter((t) => t.type === "iframe").map((t) => t.url)).not.toContain(frame.url);
  });

  it("a same-origin frame is reached by deepLocator", async () => {
    const page = await show("frames/same-origin.html");
    await page.deepLocator("#same >> #child-button").click();
    expect(await page.deepLocator("#same >> #child-result").textContent()).toBe("child clicked");
  });

  it("a srcdoc frame is a frame of its own, reached by deepLocator", async () => {
    const page = await show("frames/srcdoc.html");
    const frame = await frameAt(page, "about:srcdoc");
    expect(frame.parent).toBe(page.mainFrame());
    await page.deepLocator("#srcdoc >> #srcdoc-button").click();
    expect(await frame.evaluate(() => document.getElementById("srcdoc-result")?.textContent)).toBe(
      "srcdoc clicked",
    );
  });

  it("nested same-origin frames are reached two deep", async () => {
    const page = await show("frames/nested-same.html");
    const inner = await frameAt(page, fx.site.url("frames/child.html"));
    expect(inner.parent?.url).toBe(fx.site.url("frames/same-middle.html"));
    await page.deepLocator("#outer >> #inner >> #child-button").click();
    expect(await childResult(inner)).toBe("child clicked");
  });

  it("the main-frame locator does not look inside frames", async () => {
    const page = await show("frames/same-origin.html");
    expect(await page.locator("#child-button").count()).toBe(0);
    expect(await page.deepLocator("#same >> #child-button").count()).toBe(1);
  });

  it("a frame's own locator() searches that frame", async () => {
    const page = await show("frames/same-origin.html");
    const frame = await frameAt(page, fx.site.url("frames/child.html"));
    await frame.locator("#child-button").click();
    expect(await childResult(frame)).toBe("child clicked");
  });
});

describe("one page with every kind of frame", () => {
  it("lists each frame once, with its parent", async () => {
    const page = await show("frames/mixed.html");
    const main = page.mainFrame();
    const cross = await frameAt(page, fx.site.crossUrl("frames/child.html"));
    await frameAt(page, "about:srcdoc");
    await frameAt(page, fx.site.url("frames/child.html"));
    const middle = await frameAt(page, fx.site.crossUrl("frames/cross-middle.html"));
    await frameAt(page, fx.site.thirdUrl("frames/child.html"));
    const parentOf = (url: string) =>
      page
        .frames()
        .filter((f) => f.url === url)
        .map((f) => f.parent?.url);
    expect(page.frames()).toHaveLength(6);
    expect(parentOf(fx.site.url("frames/child.html"))).toEqual([main.url]);
    expect(parentOf("about:srcdoc")).toEqual([main.url]);
    expect(parentOf(fx.site.crossUrl("frames/cross-middle.html"))).toEqual([main.url]);
    // cross-middle.html frames the third site's child.html.
    expect(parentOf(fx.site.thirdUrl("frames/child.html"))).toEqual([middle.url]);
    expect(cross.parent).toBe(main);
    expect(cross.isOutOfProcess).toBe(true);
  });

  it("reaches the button in each of them", async () => {
    const page = await show("frames/mixed.html");
    await page.deepLocator("#same >> #child-button").click();
    await page.deepLocator("#srcdoc >> #srcdoc-button").click();
    await page.deepLocator("#cross >> #child-button").click();
    await page.deepLocator("#nested >> #inner >> #child-button").click();
    expect(await page.deepLocator("#same >> #child-result").textContent()).toBe("child clicked");
    expect(await page.deepLocator("#srcdoc >> #srcdoc-result").textContent()).toBe("srcdoc clicked");
    expect(await page.deepLocator("#cross >> #child-result").textContent()).toBe("child clicked");
    expect(await page.deepLocator("#nested >> #inner >> #child-result").textContent()).toBe("child clicked");
  });
});

describe("XPath through iframe steps", () => {
  it("crosses into a cross-site frame at an iframe step of an absolute XPath", async () => {
    const page = await show("frames/cross-site.html");
    await page.deepLocator("/html/body/iframe[1]/html/body/button").click();
    expect(await page.deepLocator("/html/body/iframe[1]/html/body/p[2]").textContent()).toBe("child clicked");
  });

  it("crosses two frames deep", async () => {
    const page = await show("frames/nested-cross.html");
    const xpath = "/html[1]/body[1]/iframe[1]/html[1]/body[1]/iframe[1]/html[1]/body[1]/p[3]/span[1]";
    expect(await page.deepLocator(xpath).textContent()).toBe(new URL(fx.site.thirdOrigin).host);
  });

  it("picks the right frame among several by position", async () => {
    const page = await show("frames/mixed.html");
    expect(await page.deepLocator("/html/body/iframe[2]/html/body/button").textContent()).toBe(
      "Srcdoc button",
    );
    expect(await page.deepLocator("/html/body/iframe[3]/html/body/p[3]/span").textContent()).toBe(
      new URL(fx.site.crossOrigin).host,
    );
  });

  it("searches the child document after a `//` that follows the iframe step", async () => {
    const page = await show("frames/cross-site.html");
    expect(await page.deepLocator("//iframe[@id='pay']//button").textContent()).toBe("Child button");
  });

  it("mixes with `>>` steps", async () => {
    const page = await show("frames/nested-cross.html");
    expect(await page.deepLocator("iframe#outer >> /html/body/iframe[1]/html/body/h1").textContent()).toBe(
      "Child frame",
    );
  });
});

describe("failures name the selector and the step", () => {
  it("a step before `>>` that is not an iframe gives ContentFrameNotFoundError", async () => {
    const page = await show("frames/cross-site.html");
    const started = Date.now();
    const error = await page
      .deepLocator("h1 >> #child-button")
      .click({ timeout: 60_000 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ContentFrameNotFoundError", selector: "h1 >> #child-button" });
    expect((error as Error).message).toContain("step 1 (h1) matched <h1>");
    // It is not something waiting would fix: not the minute the timeout allows.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it("a missing iframe gives ServiceElementNotFoundError for step 1", async () => {
    const page = await show("frames/cross-site.html");
    const error = await page
      .deepLocator("iframe#nope >> #child-button")
      .click({ timeout: 300 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: "ServiceElementNotFoundError",
      selector: "iframe#nope >> #child-button",
    });
    expect((error as Error).message).toContain("step 1 of 2");
  });

  it("a missing element inside the frame gives ServiceElementNotFoundError for the last step", async () => {
    const page = await show("frames/cross-site.html");
    const error = await page
      .deepLocator("iframe#pay >> #nope")
      .click({ timeout: 300 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "ServiceElementNotFoundError", selector: "iframe#pay >> #nope" });
    expect((error as Error).message).toContain("step 2 of 2");
  });

  it("an XPath that does not resolve inside the frame gives XPathResolutionError", async () => {
    const page = await show("frames/cross-site.html");
    const xpath = "/html/body/iframe[1]/html/body/table";
    const error = await page
      .deepLocator(xpath)
      .textContent({ timeout: 300 })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "XPathResolutionError", xpath });
    expect((error as Error).message).toContain("step 2 of 2");
  });

  it("an iframe whose document never arrives gives ServiceIframeError within the timeout", async () => {
    const page = await show("index.html");
    await page.evaluate((src: string) => {
      const frame = document.createElement("iframe");
      frame.id = "stuck";
      frame.src = src;
      document.body.append(frame);
    }, fx.site.crossUrl("slow?ms=60000"));
    const started = Date.now();
    const error = await page
      .deepLocator("#stuck >> #body")
      .textContent({ timeout: 500 })
      .catch((e: unknown) => e);
    // Not the minute the frame takes to load.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(error).toMatchObject({ name: "ServiceIframeError" });
    expect((error as Error).message).toContain('step 1 (#stuck) of "#stuck >> #body"');
  });

  it("count() is 0 when a frame on the way is missing", async () => {
    const page = await show("frames/cross-site.html");
    expect(await page.deepLocator("iframe#nope >> button").count()).toBe(0);
    expect(await page.deepLocator("iframe#pay >> button").count()).toBe(1);
  });
});
