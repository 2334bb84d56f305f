import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readlink, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AuthProxy,
  type FixtureServer,
  type HttpsFixtureServer,
  startAuthProxy,
  startFixtureServer,
  startHttpsServer,
  startXvfb,
  type VirtualDisplay,
  waitForNoChrome,
  xvfbAvailable,
} from "@deckhand/testkit";
import { DEFAULT_ARGS, Deckhand, type LogLine, ServiceInitError, ServiceNavigationError } from "deckhand";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { browserArgs, browserProcess, QUIET_ARGS, startDeckhand, testOptions } from "../support/browser.ts";

let site: FixtureServer;
beforeAll(async () => {
  site = await startFixtureServer();
});
afterAll(async () => {
  await site.close();
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Polls `read` until it gives a non-empty list (or a minute passes: only a stall takes that long). */
async function eventually<T>(read: () => Promise<T[]>): Promise<T[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await read();
    if (value.length > 0 || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function withDeckhand<T>(dh: Deckhand, fn: (dh: Deckhand) => Promise<T>): Promise<T> {
  try {
    return await fn(dh);
  } finally {
    await dh.close();
  }
}

describe("arguments", () => {
  test("headless is the default", async () => {
    await withDeckhand(await startDeckhand(), async (dh) => {
      expect(await browserArgs(dh)).toContain("--headless");
      expect(await dh.page.evaluate("navigator.userAgent")).toContain("HeadlessChrome");
    });
  });

  test("headless: false with no display fails at init with ServiceInitError quoting Chrome", async () => {
    const env = process.env.DISPLAY;
    delete process.env.DISPLAY;
    try {
      const dh = new Deckhand(testOptions({ headless: false, connectTimeoutMs: 10_000 }));
      const error = await dh.init().then(
        () => undefined,
        (e: unknown) => e,
      );
      await dh.close();
      expect(error).toBeInstanceOf(ServiceInitError);
      expect((error as Error).message).toMatch(/Missing X server or \$DISPLAY/);
    } finally {
      if (env !== undefined) process.env.DISPLAY = env;
    }
  });

  // A real window on a virtual display (Xvfb; `npm test` installs it, see scripts/setup.mjs).
  describe.skipIf(!xvfbAvailable())("on a display (Xvfb)", () => {
    let screen: VirtualDisplay;
    let saved: string | undefined;
    beforeAll(async () => {
      screen = await startXvfb({ width: 1280, height: 800 });
      saved = process.env.DISPLAY;
      process.env.DISPLAY = screen.display;
    });
    afterAll(async () => {
      if (saved === undefined) delete process.env.DISPLAY;
      else process.env.DISPLAY = saved;
      await screen?.close();
    });

    test("headless: false opens a real browser window, which pages draw into", async () => {
      await withDeckhand(await startDeckhand({ headless: false }), async (dh) => {
        expect(await browserArgs(dh)).not.toContain("--headless");
        expect(await dh.page.evaluate("navigator.userAgent")).not.toContain("HeadlessChrome");
        const browser = dh.context.browser.connection.root;
        const { bounds } = await browser.send("Browser.getWindowForTarget", { targetId: dh.page.targetId });
        expect(bounds.windowState).toBe("normal");
        expect(bounds.width).toBeGreaterThan(100);
        expect(bounds.height).toBeGreaterThan(100);
        await dh.page.goto(site.url("index.html"));
        await dh.page.locator("#increment").click();
        expect(await dh.page.evaluate("document.querySelector('#count').textContent")).toBe("1");
        const png = await dh.page.screenshot({ type: "png" });
        expect(png.subarray(1, 4).toString()).toBe("PNG");
      });
    });

    test("devtools: true opens DevTools beside each tab", async () => {
      await withDeckhand(await startDeckhand({ headless: false, devtools: true }), async (dh) => {
        const browser = dh.context.browser.connection.root;
        const devtools = await eventually(async () => {
          const { targetInfos } = await browser.send("Target.getTargets");
          return targetInfos.filter((t) => t.url.startsWith("devtools://"));
        });
        expect(devtools.length).toBeGreaterThan(0);
      });
    });
  });

  test("the spec's five defaults come before the caller's args", async () => {
    await withDeckhand(await startDeckhand({ args: ["--deckhand-test-flag=1"] }), async (dh) => {
      const args = await browserArgs(dh);
      const mine = args.indexOf("--deckhand-test-flag=1");
      expect(mine).toBeGreaterThan(-1);
      for (const d of DEFAULT_ARGS) {
        expect(args).toContain(d);
        expect(args.indexOf(d)).toBeLessThan(mine);
      }
      expect(DEFAULT_ARGS).toEqual([
        "--remote-allow-origins=*",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-dev-shm-usage",
        "--site-per-process",
      ]);
    });
  });

  test("ignoreDefaultArgs: true drops every default", async () => {
    await withDeckhand(await startDeckhand({ ignoreDefaultArgs: true }), async (dh) => {
      const args = await browserArgs(dh);
      // --no-first-run is among QUIET_ARGS the tests pass themselves, so check the others.
      for (const d of DEFAULT_ARGS.filter((a) => !QUIET_ARGS.includes(a))) expect(args).not.toContain(d);
    });
  });

  test("ignoreDefaultArgs: [list] drops exactly those", async () => {
    await withDeckhand(
      await startDeckhand({ ignoreDefaultArgs: ["--disable-dev-shm-usage"] }),
      async (dh) => {
        const args = await browserArgs(dh);
        expect(args).not.toContain("--disable-dev-shm-usage");
        expect(args).toContain("--site-per-process");
        expect(args).toContain("--remote-allow-origins=*");
      },
    );
  });

  test("devtools opens DevTools for each tab", async () => {
    await withDeckhand(await startDeckhand({ devtools: true }), async (dh) => {
      expect(await browserArgs(dh)).toContain("--auto-open-devtools-for-tabs");
    });
  });

  test("executablePath is the browser that runs", async () => {
    await withDeckhand(await startDeckhand({ executablePath: "/usr/lib/chromium/chromium" }), async (dh) => {
      const { pid } = await browserProcess(dh);
      const { readlink } = await import("node:fs/promises");
      expect(await readlink(`/proc/${pid}/exe`)).toBe("/usr/lib/chromium/chromium");
    });
  });
});

describe("port", () => {
  test("a given port is the DevTools port", async () => {
    const port = await freePort();
    await withDeckhand(await startDeckhand({ port }), async (dh) => {
      expect(new URL(dh.connectURL()).port).toBe(String(port));
      const version = (await (await fetch(`http://127.0.0.1:${port}/json/version`)).json()) as {
        Browser: string;
      };
      expect(version.Browser).toMatch(/Chrome/);
    });
  });

  test("without a port a free one is picked", async () => {
    await withDeckhand(await startDeckhand(), async (dh) => {
      expect(Number(new URL(dh.connectURL()).port)).toBeGreaterThan(0);
    });
  });

  test("a port in use fails with ServiceInitError saying so", async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const { port } = server.address() as { port: number };
    try {
      const dh = new Deckhand(testOptions({ port, connectTimeoutMs: 8_000 }));
      const error = await dh.init().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServiceInitError);
      expect((error as Error).message).toContain(String(port));
    } finally {
      server.close();
    }
  });
});

describe("userDataDir and viewport", () => {
  test("a cookie and localStorage written just before close() are there in the next run on the same userDataDir", async () => {
    const dir = await mkdtemp(join(tmpdir(), "deckhand-test-userdata-"));
    try {
      await withDeckhand(await startDeckhand({ userDataDir: dir }), async (dh) => {
        await dh.page.goto(site.url("/set-cookie?name=flavour&value=oatmeal"));
        // Chrome writes localStorage to disk in batches, later: only a clean shutdown keeps this.
        await dh.page.evaluate(() => localStorage.setItem("topping", "raisins"));
      });
      await withDeckhand(await startDeckhand({ userDataDir: dir }), async (dh) => {
        await dh.page.goto(site.url("/echo-cookies"));
        expect(await dh.page.locator("#cookies").textContent()).toContain("flavour=oatmeal");
        expect(await dh.page.evaluate(() => localStorage.getItem("topping"))).toBe("raisins");
      });
      expect(await waitForNoChrome(dir)).toEqual([]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("the viewport sets the page's size, for new tabs too", async () => {
    await withDeckhand(await startDeckhand({ viewport: { width: 1000, height: 640 } }), async (dh) => {
      expect(await dh.page.evaluate("[innerWidth, innerHeight]")).toEqual([1000, 640]);
      const second = await dh.context.newPage();
      expect(await second.evaluate("[innerWidth, innerHeight]")).toEqual([1000, 640]);
    });
  });
});

describe("a long TMPDIR", () => {
  // Chrome makes its process-singleton socket under its TMPDIR, and a socket's path has at most 107
  // bytes: under a TMPDIR of 150 characters it used to abort at start ("Socket path too long").
  async function withLongTmpdir(fn: (long: string) => Promise<void>): Promise<void> {
    const base = join(tmpdir(), "deckhand-test-longtmp-");
    const long = base + "x".repeat(150 - base.length);
    await mkdir(long);
    const before = process.env.TMPDIR;
    process.env.TMPDIR = long;
    try {
      expect(tmpdir()).toHaveLength(150);
      await fn(long);
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
      await rm(long, { recursive: true, force: true });
    }
  }

  /** The browser's TMPDIR and where its profile's SingletonSocket link leads. */
  async function chromeTemp(dh: Deckhand): Promise<{ tmp: string; socket: string; profile: string }> {
    const { pid, profile } = await browserProcess(dh);
    const environ = (await readFile(`/proc/${pid}/environ`, "utf8")).split("\0");
    const tmp = environ.find((entry) => entry.startsWith("TMPDIR="))?.slice("TMPDIR=".length) ?? "";
    return { tmp, socket: await readlink(join(profile, "SingletonSocket")), profile };
  }

  test("a browser on a temporary profile starts, its socket in a short directory, and leaves nothing", async () => {
    await withLongTmpdir(async (long) => {
      const dh = await startDeckhand();
      let seen: { tmp: string; socket: string; profile: string };
      try {
        seen = await chromeTemp(dh);
        // The profile is where the caller's TMPDIR says; Chrome's own files are where they fit.
        expect(seen.profile.startsWith(`${long}/`)).toBe(true);
        expect(seen.socket.startsWith(`${seen.tmp}/`)).toBe(true);
        expect(seen.socket.length).toBeLessThanOrEqual(107);
        await dh.page.goto(site.url("form.html"));
        expect(await dh.page.locator("#username").count()).toBe(1);
      } finally {
        await dh.close();
      }
      expect(await waitForNoChrome(seen.profile)).toEqual([]);
      expect(existsSync(seen.profile)).toBe(false);
      expect(existsSync(seen.tmp)).toBe(false);
    });
  });

  test("so does a browser on the caller's own profile", async () => {
    await withLongTmpdir(async (long) => {
      const dir = await mkdtemp(join(long, "profile-"));
      const dh = await startDeckhand({ userDataDir: dir });
      let seen: { tmp: string; socket: string; profile: string };
      try {
        seen = await chromeTemp(dh);
        expect(seen.profile).toBe(dir);
        expect(seen.socket.startsWith(`${seen.tmp}/`)).toBe(true);
        await dh.page.goto(site.url("form.html"));
        expect(await dh.page.locator("#username").count()).toBe(1);
      } finally {
        await dh.close();
      }
      expect(await waitForNoChrome(dir)).toEqual([]);
      // The profile is the caller's and stays; Deckhand's scratch directory goes.
      expect(existsSync(dir)).toBe(true);
      expect(existsSync(seen.tmp)).toBe(false);
    });
  });
});

describe("proxy", () => {
  let proxy: AuthProxy;
  beforeAll(async () => {
    proxy = await startAuthProxy({ username: "deck", password: "s3cret-proxy-pw" });
  });
  afterAll(async () => {
    await proxy.close();
  });

  test("pages load through a proxy that requires credentials, answered over CDP", async () => {
    const lines: LogLine[] = [];
    const dh = await startDeckhand(
      {
        proxy: { server: proxy.server, bypass: "<-loopback>", username: "deck", password: "s3cret-proxy-pw" },
      },
      { verbose: 2, logger: (line) => lines.push(line) },
    );
    await withDeckhand(dh, async () => {
      const url = site.url("/index.html");
      expect(await dh.page.goto(url)).toBe(200);
      expect(await dh.page.title()).toBe("Deckhand fixture");
      expect(proxy.proxiedRequests).toContain(url);
      expect(proxy.authFailures).toBeGreaterThan(0);
    });
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).not.toContain("s3cret-proxy-pw");
  });

  test("without credentials the proxy refuses, and the page says so", async () => {
    await withDeckhand(
      await startDeckhand({ proxy: { server: proxy.server, bypass: "<-loopback>" } }),
      async (dh) => {
        const status = await dh.page.goto(site.url("/index.html")).catch((e: unknown) => e);
        // Chrome either shows the proxy's 407 or fails the navigation: either way not the page.
        if (typeof status === "number") expect(status).toBe(407);
        else expect(status).toBeInstanceOf(ServiceNavigationError);
      },
    );
  });
});

describe("ignoreHTTPSErrors", () => {
  let https: HttpsFixtureServer;
  beforeAll(async () => {
    https = await startHttpsServer();
  });
  afterAll(async () => {
    await https.close();
  });

  test("a self-signed certificate fails the navigation by default", async () => {
    await withDeckhand(await startDeckhand(), async (dh) => {
      const error = await dh.page.goto(https.url("/index.html")).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ServiceNavigationError);
      expect((error as Error).message).toMatch(/CERT/);
    });
  });

  test("with ignoreHTTPSErrors the page loads", async () => {
    await withDeckhand(await startDeckhand({ ignoreHTTPSErrors: true }), async (dh) => {
      expect(await dh.page.goto(https.url("/index.html"))).toBe(200);
      expect(await dh.page.title()).toBe("Deckhand fixture");
    });
  });
});

describe("cdpUrl", () => {
  test("attaches to a running browser over http:// and close() leaves it running", async () => {
    const port = await freePort();
    const owner = await startDeckhand({ port });
    try {
      await owner.page.goto(site.url("/index.html"));
      const guest = new Deckhand(testOptions({ cdpUrl: `http://127.0.0.1:${port}` }));
      await guest.init();
      const urls = guest.context.pages().map((p) => p.url());
      expect(urls).toContain(site.url("/index.html"));
      await guest.close();
      // The owner's browser is still alive and usable.
      expect(await owner.page.evaluate("1 + 1")).toBe(2);
    } finally {
      await owner.close();
    }
  });
});
