// The deckhand-server command, run the way an operator runs it: a separate Node 24 process on the
// TypeScript source, against a temporary data directory.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { liveChromeProcesses, waitForNoChrome } from "@deckhand/testkit";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseCommand } from "../src/cli/options.ts";

const here = path.dirname(fileURLToPath(import.meta.url));
const packageDir = path.resolve(here, "..");
const node = path.resolve(packageDir, "../../node_modules/.bin/node");
const cli = path.join(packageDir, "src/cli.ts");

// The operator's environment must not leak into the tests.
const baseEnv = { ...process.env };
delete baseEnv.DATABASE_URL;
delete baseEnv.DECKHAND_API_KEYS;
delete baseEnv.DECKHAND_LOG_LEVEL;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: NodeJS.ProcessEnv = {}, entry = cli): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, ["--conditions=deckhand-source", entry, ...args], {
      env: { ...baseEnv, ...env },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const running = new Set<ChildProcess>();

/** Starts the server and waits for its "listening on" line. */
async function startServer(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(node, ["--conditions=deckhand-source", cli, "--port", "0", ...args], {
    env: { ...baseEnv, DECKHAND_LOG_LEVEL: "warn", ...env },
  });
  running.add(child);
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no listening line; stdout: ${stdout} stderr: ${stderr}`)),
      // A bound for a process that never starts, not a measure of start-up: loading the TypeScript
      // source took 21 s for one process at a load of 60 (server-process.ts).
      60_000,
    );
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      const match = /listening on (http:\/\/[^\s]+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on("close", () => reject(new Error(`exited early; stdout: ${stdout} stderr: ${stderr}`)));
  });
  return {
    url,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async () => {
      child.kill("SIGTERM");
      const code = await exited;
      running.delete(child);
      return code;
    },
  };
}

describe("deckhand-server", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "deckhand-cli-"));
  });
  afterEach(() => {
    for (const child of running) child.kill("SIGKILL");
    running.clear();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("--help documents every flag, command and environment variable", async () => {
    const { code, stdout } = await run(["--help"]);
    expect(code).toBe(0);
    for (const text of [
      "--host",
      "--port",
      "--data-dir",
      "--database-url",
      "--max-sessions",
      "--session-idle-timeout",
      "--session-disconnect-grace",
      "--body-limit",
      "--max-browsers",
      "--warm-browsers",
      "--sessions-per-browser",
      "--browser-arg",
      "--cdp-url-hosts",
      "--model-base-url-hosts",
      "--isolation",
      "--max-sessions-per-project",
      "--max-tabs-per-session",
      "--cdp-max-message-bytes",
      "--cdp-bytes-per-second",
      "--headers-timeout",
      "--request-timeout",
      "--connection-idle-timeout",
      "--max-connections-per-address",
      "--metrics-port",
      "--metrics-host",
      "--ready-max-event-loop-lag",
      "DECKHAND_METRICS_TOKEN",
      "keys create",
      "keys list",
      "keys revoke <id>",
      "DATABASE_URL",
      "DECKHAND_API_KEYS",
      "DECKHAND_LOG_LEVEL",
      "DECKHAND_CDP_URL_HOSTS",
      "DECKHAND_MODEL_BASE_URL_HOSTS",
      "DECKHAND_ISOLATION",
      "DECKHAND_WARM_BROWSERS",
      "DECKHAND_CDP_BYTES_PER_SECOND",
      "--log-format",
      "DECKHAND_LOG_FORMAT",
      "--advertise-url",
      "--cluster-secret",
      "DECKHAND_ADVERTISE_URL",
      "DECKHAND_CLUSTER_SECRET",
    ]) {
      expect(stdout).toContain(text);
    }
  });

  it("runs through bin/deckhand-server.js from the repository, without a build", async () => {
    const { code, stdout } = await run(["--help"], {}, path.join(packageDir, "bin/deckhand-server.js"));
    expect(code).toBe(0);
    expect(stdout).toContain("Usage:");
  });

  it("rejects an unknown flag and says which are valid", async () => {
    const { code, stderr } = await run(["--prot", "3000"]);
    expect(code).toBe(2);
    expect(stderr).toContain("Unknown option --prot");
    expect(stderr).toContain("--port");
    expect(stderr).toContain("--data-dir");
  });

  it("rejects a bad value and says what is expected", async () => {
    const { code, stderr } = await run(["--port", "http"]);
    expect(code).toBe(2);
    expect(stderr).toContain("--port must be a whole number from 0 to 65535");
  });

  it("reads --log-format (json or pretty, also DECKHAND_LOG_FORMAT), and refuses another", () => {
    const format = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
      (parseCommand(argv, env) as { logFormat?: string }).logFormat;
    expect(format([])).toBeUndefined();
    expect(format(["--log-format", "json"])).toBe("json");
    expect(format([], { DECKHAND_LOG_FORMAT: "pretty" })).toBe("pretty");
    expect(format(["--log-format=json"], { DECKHAND_LOG_FORMAT: "pretty" })).toBe("json");
    expect(() => parseCommand(["--log-format", "xml"], {})).toThrow(/--log-format must be json .* or pretty/);
  });

  it("reads --screenshot-retention in days (0: no screenshots), and refuses what is not one", () => {
    const days = (argv: string[]) =>
      (parseCommand(argv, {}) as { screenshotRetentionDays?: number }).screenshotRetentionDays;
    expect(days([])).toBeUndefined();
    expect(days(["--screenshot-retention", "30"])).toBe(30);
    expect(days(["--screenshot-retention=0"])).toBe(0);
    expect(() => parseCommand(["--screenshot-retention=-1"], {})).toThrow(/--screenshot-retention must be/);
    expect(() => parseCommand(["--screenshot-retention", "a week"], {})).toThrow(
      /--screenshot-retention must be/,
    );
  });

  it("reads the cluster settings (--advertise-url and the secret, with PostgreSQL), and refuses what cannot work", () => {
    const serve = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
      parseCommand(argv, env) as Record<string, unknown>;
    const secret = "s".repeat(40);
    const db = "--database-url=postgres://db/deckhand";
    expect(
      serve([db, "--advertise-url=http://10.0.0.5:3000"], { DECKHAND_CLUSTER_SECRET: secret }).cluster,
    ).toEqual({
      advertiseUrl: "http://10.0.0.5:3000",
      secret,
    });
    expect(
      serve([db], { DECKHAND_ADVERTISE_URL: "https://node-1.internal", DECKHAND_CLUSTER_SECRET: secret })
        .cluster,
    ).toEqual({
      advertiseUrl: "https://node-1.internal",
      secret,
    });
    // Without them a PostgreSQL node stays as before: no forwarding.
    expect(serve([db]).cluster).toBeUndefined();
    expect(() =>
      serve(["--advertise-url=http://10.0.0.5:3000"], { DECKHAND_CLUSTER_SECRET: secret }),
    ).toThrow(/give --database-url too/);
    expect(() => serve([db, "--advertise-url=http://10.0.0.5:3000"])).toThrow(/needs the cluster secret/);
    expect(() => serve([db], { DECKHAND_CLUSTER_SECRET: secret })).toThrow(/needs --advertise-url/);
    expect(() => serve([db, "--advertise-url=http://10.0.0.5:3000", "--cluster-secret=short"])).toThrow(
      /at least 32 characters/,
    );
    expect(() => serve([db, "--advertise-url=10.0.0.5:3000"], { DECKHAND_CLUSTER_SECRET: secret })).toThrow(
      /http or https URL|absolute http\(s\) URL/,
    );
    expect(() =>
      serve([db, "--advertise-url=http://10.0.0.5:3000/api"], { DECKHAND_CLUSTER_SECRET: secret }),
    ).toThrow(/no path, query or credentials/);
  });

  it("reads the connection limits, metrics and readiness settings, and refuses what cannot work", () => {
    const serve = (argv: string[], env: NodeJS.ProcessEnv = {}) =>
      parseCommand(argv, env) as Record<string, unknown>;
    expect(
      serve([
        "--headers-timeout=5",
        "--request-timeout=20",
        "--connection-idle-timeout=65",
        "--max-connections-per-address=0",
        "--metrics-port=9464",
        "--metrics-host=10.0.0.5",
        "--ready-max-event-loop-lag=0.5",
      ]),
    ).toMatchObject({
      headersTimeoutMs: 5_000,
      requestTimeoutMs: 20_000,
      connectionIdleTimeoutMs: 65_000,
      maxConnectionsPerAddress: 0,
      metricsPort: 9464,
      metricsHost: "10.0.0.5",
      readyMaxEventLoopLagMs: 500,
    });
    expect(serve([], { DECKHAND_METRICS_TOKEN: "0123456789abcdef0123" }).metricsToken).toBe(
      "0123456789abcdef0123",
    );
    expect(serve([]).metricsToken).toBeUndefined();
    expect(() => serve(["--headers-timeout=40"])).toThrow(
      /--request-timeout .* must be at least --headers-timeout/,
    );
    expect(() => serve(["--metrics-host=0.0.0.0"])).toThrow(/--metrics-host goes with --metrics-port/);
    expect(() => serve([], { DECKHAND_METRICS_TOKEN: "short" })).toThrow(/at least 16 characters/);
    expect(() => serve(["--max-connections-per-address=-1"])).toThrow(
      /--max-connections-per-address must be/,
    );
    expect(() => serve(["--headers-timeout=0"])).toThrow(/--headers-timeout must be a number greater than 0/);
  });

  it("reads --cdp-url-hosts and --model-base-url-hosts (or their variables), with safe defaults beyond loopback", () => {
    const hosts = (command: ReturnType<typeof parseCommand>, key: "cdpUrlHosts" | "modelBaseUrlHosts") =>
      (command as unknown as Record<string, { text: string }>)[key]?.text;
    expect(hosts(parseCommand(["--cdp-url-hosts", "*"], {}), "cdpUrlHosts")).toBe("*");
    expect(hosts(parseCommand(["--cdp-url-hosts=none"], {}), "cdpUrlHosts")).toBe("none");
    expect(
      hosts(
        parseCommand([], { DECKHAND_CDP_URL_HOSTS: "Browsers.internal, [::1] ,10.0.0.0/8" }),
        "cdpUrlHosts",
      ),
    ).toBe("Browsers.internal, [::1] ,10.0.0.0/8");
    expect(
      hosts(parseCommand(["--cdp-url-hosts=a.test"], { DECKHAND_CDP_URL_HOSTS: "*" }), "cdpUrlHosts"),
    ).toBe("a.test");
    expect(() => parseCommand(["--cdp-url-hosts=a b"], {})).toThrow(/not a host name, an address/);
    expect(() => parseCommand(["--model-base-url-hosts=10.0.0.0/99"], {})).toThrow(/not a CIDR range/);
    // On loopback, anywhere; beyond it, nowhere for cdpUrl and the public internet for models.
    expect(hosts(parseCommand([], {}), "cdpUrlHosts")).toBe("*");
    expect(hosts(parseCommand([], {}), "modelBaseUrlHosts")).toBe("*");
    expect(hosts(parseCommand(["--host", "0.0.0.0"], {}), "cdpUrlHosts")).toBe("none");
    expect(hosts(parseCommand(["--host", "0.0.0.0"], {}), "modelBaseUrlHosts")).toBe("public");
    expect(
      hosts(
        parseCommand(["--host", "::", "--model-base-url-hosts", "public,models.internal"], {}),
        "modelBaseUrlHosts",
      ),
    ).toBe("public,models.internal");
    expect(parseCommand(["--isolation", "session"], {})).toMatchObject({ isolation: "session" });
    expect(parseCommand([], { DECKHAND_ISOLATION: "project" })).toMatchObject({ isolation: "project" });
    expect(() => parseCommand(["--isolation", "none"], {})).toThrow(
      /--isolation must be project .* or session/,
    );
    // Warm browsers: the flag wins over the variable, 0 turns them off, never more than --max-browsers.
    expect(parseCommand([], {})).not.toHaveProperty("warmBrowsers");
    expect(parseCommand(["--warm-browsers", "0"], {})).toMatchObject({ warmBrowsers: 0 });
    expect(parseCommand([], { DECKHAND_WARM_BROWSERS: "3" })).toMatchObject({ warmBrowsers: 3 });
    expect(parseCommand(["--warm-browsers=2"], { DECKHAND_WARM_BROWSERS: "3" })).toMatchObject({
      warmBrowsers: 2,
    });
    expect(() => parseCommand(["--warm-browsers", "some"], {})).toThrow(
      /--warm-browsers must be a whole number from 0/,
    );
    expect(() => parseCommand(["--warm-browsers", "3", "--max-browsers", "2"], {})).toThrow(
      /--warm-browsers \(3\) must be at most --max-browsers \(2\)/,
    );
    expect(() => parseCommand(["--warm-browsers", "11"], {})).toThrow(
      /at most --max-browsers \(10, its default\)/,
    );
    expect(
      parseCommand(
        [
          "--max-sessions-per-project",
          "3",
          "--max-tabs-per-session",
          "5",
          "--cdp-max-message-bytes",
          "65536",
        ],
        {},
      ),
    ).toMatchObject({ maxSessionsPerProject: 3, maxTabsPerSession: 5, cdpMaxMessageBytes: 65536 });
    expect(parseCommand(["--cdp-bytes-per-second", "1048576"], {})).toMatchObject({
      cdpBytesPerSecond: 1048576,
    });
    expect(parseCommand([], { DECKHAND_CDP_BYTES_PER_SECOND: "2097152" })).toMatchObject({
      cdpBytesPerSecond: 2097152,
    });
    expect(
      parseCommand(["--cdp-bytes-per-second", "4096"], { DECKHAND_CDP_BYTES_PER_SECOND: "2097152" }),
    ).toMatchObject({ cdpBytesPerSecond: 4096 });
    expect(parseCommand([], {})).not.toHaveProperty("cdpBytesPerSecond");
    expect(() => parseCommand(["--cdp-bytes-per-second", "100"], {})).toThrow(
      /--cdp-bytes-per-second must be a whole number from 1024/,
    );
    expect(() => parseCommand(["--cdp-bytes-per-second", "lots"], {})).toThrow(
      /--cdp-bytes-per-second must be a whole number/,
    );
    expect(parseCommand(["--session-disconnect-grace", "2.5"], {})).toMatchObject({
      sessionDisconnectGraceMs: 2500,
    });
    expect(() => parseCommand(["--session-disconnect-grace", "soon"], {})).toThrow(
      /--session-disconnect-grace must be a number greater than 0/,
    );
    expect(() => parseCommand(["keys", "list", "--cdp-url-hosts=*"], {})).toThrow(
      /--cdp-url-hosts is an option of the server/,
    );
  });

  it("creates, lists and revokes keys", async () => {
    const data = path.join(dir, "keys");
    const created = await run(["keys", "create", "--name", "ci", "--json", "--data-dir", data]);
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout);
    expect(key).toMatchObject({ name: "ci", key: expect.stringMatching(/^dh_/) });

    const listed = await run(["keys", "list", "--json", "--data-dir", data]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(key.key);
    expect(JSON.parse(listed.stdout)).toEqual([
      { id: key.id, name: "ci", projectId: key.projectId, createdAt: key.createdAt },
    ]);
    const table = await run(["keys", "list", "--data-dir", data]);
    expect(table.stdout).toMatch(new RegExp(`${key.id}\\s+ci\\s+${key.projectId}\\s+\\S+\\s+active`));

    const revoked = await run(["keys", "revoke", key.id, "--data-dir", data]);
    expect(revoked.code).toBe(0);
    expect(
      JSON.parse((await run(["keys", "list", "--json", "--data-dir", data])).stdout)[0].revokedAt,
    ).toEqual(expect.any(Number));
    const again = await run(["keys", "revoke", key.id, "--data-dir", data]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("No active API key");
  });

  it("on first start prints a new key once, serves the API, rejects calls without a key, runs sessions in its own Chromium pool, and stops leaving no Chrome", async () => {
    const data = path.join(dir, "first-start");
    const server = await startServer(["--data-dir", data]);
    const printed = /\b(dh_[0-9a-f]{16}_[A-Za-z0-9_-]{43})\b/.exec(server.stdout())?.[1];
    expect(printed).toBeDefined();
    expect(server.stdout()).toContain("shown only this once");

    const openapi = await fetch(`${server.url}/v1/openapi.json`);
    expect(openapi.status).toBe(200);
    expect((await openapi.json()).openapi).toBe("3.1.0");
    const replayPath = "/v1/sessions/00000000-0000-4000-8000-000000000000/replay";
    const anonymous = await fetch(`${server.url}${replayPath}`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ success: false, code: "UNAUTHORIZED" });
    const withKey = await fetch(`${server.url}${replayPath}`, {
      headers: { "x-platform-api-key": printed! },
    });
    expect(withKey.status).toBe(404);
    expect(await server.stop()).toBe(0);

    // A second start finds the key and prints none; its sessions run in its own Chromium pool, and
    // nothing of it is left running once it stopped.
    const marker = `--deckhand-cli-test=${process.pid}-${Date.now()}`;
    const again = await startServer([
      "--data-dir",
      data,
      "--max-browsers",
      "1",
      "--browser-arg=--disable-background-networking",
      "--browser-arg=--disable-component-update",
      `--browser-arg=${marker}`,
    ]);
    expect(again.stdout()).not.toContain("dh_");
    const headers = { "x-platform-api-key": printed!, "content-type": "application/json" };
    const start = await fetch(`${again.url}/v1/sessions/start`, { method: "POST", headers, body: "{}" });
    expect(start.status).toBe(200);
    const { sessionId, cdpUrl } = (await start.json()).data;
    expect(
      cdpUrl.startsWith(`${again.url.replace("http:", "ws:")}/v1/sessions/${sessionId}/cdp?token=`),
    ).toBe(true);
    const page = await fetch(`${again.url}/v1/sessions/${sessionId}/extract`, {
      method: "POST",
      headers,
      body: "{}",
    });
    expect(page.status).toBe(200);
    expect(liveChromeProcesses(marker).length).toBeGreaterThan(0);
    expect(await again.stop()).toBe(0);
    expect(await waitForNoChrome(marker)).toEqual([]);
    // Two starts of the service's process (up to a minute each on a loaded machine) and a session.
  }, 180_000);

  it("prints no key when the operator gives keys in DECKHAND_API_KEYS, and accepts them", async () => {
    const server = await startServer(["--data-dir", path.join(dir, "operator")], {
      DECKHAND_API_KEYS: "operator-one-0123456789abcdef, operator-two-0123456789abcdef",
    });
    expect(server.stdout()).not.toContain("dh_");
    const response = await fetch(`${server.url}/v1/sessions/00000000-0000-4000-8000-000000000000/replay`, {
      headers: { "x-platform-api-key": "operator-two-0123456789abcdef" },
    });
    expect(response.status).toBe(404);
    expect(await server.stop()).toBe(0);
  });
});
