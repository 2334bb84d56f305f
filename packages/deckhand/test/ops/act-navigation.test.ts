// An act whose click starts a navigation returns once the navigation has committed: page.url() is
// the new document's at once, as after goto (LOCAL: the library waits; REMOTE: the service waits,
// and the client's page catches up with the service's). One that does not commit says so.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MODES, type OpsFixture, open, opsFixture } from "./helpers.ts";

describe.each(MODES)("%s", (mode) => {
  let fx: OpsFixture;
  beforeAll(async () => {
    fx = await opsFixture(mode);
    fx.site.route("/links.html", (_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      // The server answers /slow only after 800 ms: an act that returned at the click would still
      // be on this page.
      res.end(
        '<!doctype html><html><head><title>Links</title></head><body><a id="slow" href="/slow?ms=800&body=Arrived">' +
          'Go slow</a> <a id="empty" href="/status/204">Go nowhere</a></body></html>',
      );
    });
  }, 60_000);
  afterAll(async () => {
    await fx?.close();
  });

  const click = (id: string, description: string) =>
    fx.dh.act({ selector: `//a[@id='${id}']`, method: "click", description, arguments: [] });

  it("returns after the navigation its click started has committed: page.url() is the new page's", async () => {
    const page = await open(fx, "links.html");
    const result = await click("slow", "the Go slow link");
    expect(result.success).toBe(true);
    expect(page.url()).toBe(fx.site.url("slow?ms=800&body=Arrived"));
    expect(result.message).not.toMatch(/navigation/);
    expect(await page.evaluate(() => document.getElementById("body")?.textContent)).toBe("Arrived");
  }, 30_000);

  it("says so when the navigation its click asked for did not commit (an empty response)", async () => {
    const page = await open(fx, "links.html");
    const result = await click("empty", "the Go nowhere link");
    expect(result.success).toBe(true);
    expect(result.message).toContain(`navigation to ${fx.site.url("status/204")} that did not commit`);
    expect(page.url()).toBe(fx.site.url("links.html"));
  }, 30_000);
});
