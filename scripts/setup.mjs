#!/usr/bin/env node
// Makes a fresh clone runnable: installs the npm dependencies when they are missing or stale, and
// Debian's `chromium` when no Chrome or Chromium can be found (only as root with apt-get; otherwise
// it says what to install). With --tests (npm test) it also installs Debian's `xvfb`, the virtual
// display the tests of a windowed browser (headless: false) run on, and Debian's `nginx`, the plain
// load balancer the cluster tests put in front of three nodes; without them those tests are skipped.
// For the service (npm start, the benchmarks, the tests) it installs Debian's `libjemalloc2`, the
// allocator the service runs with (scripts/service-node-flags.mjs).
//
//   node scripts/setup.mjs [--tests] [--quiet] [--run FILE [ARGS...]]
//
// --run hands over to the pinned Node 24 from node_modules: it runs FILE (TypeScript, with the
// "deckhand-source" condition) with ARGS, passes signals on, and exits as FILE does. The npm
// scripts that run TypeScript go through it because an npm script cannot do it by itself on a
// fresh clone: the script's shell looks `node` up once, before `npm ci` has created
// node_modules/.bin/node, and keeps using the machine's (older) Node for the rest of the line.
//
// Plain JavaScript on purpose: it runs on whatever Node the machine has, before the pinned Node 24
// from node_modules exists.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { findJemalloc, SERVICE_NODE_FLAGS, serviceEnvironment } from "./service-node-flags.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const argv = process.argv.slice(2);
const runAt = argv.indexOf("--run");
const options = runAt === -1 ? argv : argv.slice(0, runAt);
const handOver = runAt === -1 ? undefined : argv.slice(runAt + 1);
const quiet = options.includes("--quiet");
const forTests = options.includes("--tests");
const say = (msg) => {
  if (!quiet) console.error(`[setup] ${msg}`);
};
const fail = (msg) => {
  console.error(`[setup] ${msg}`);
  process.exit(1);
};
if (handOver !== undefined && handOver.length === 0) fail("--run needs the file to run.");

function run(cmd, args) {
  // apt-get's package scripts must not stop to ask questions (nor complain that they cannot).
  const env = { ...process.env, DEBIAN_FRONTEND: process.env.DEBIAN_FRONTEND ?? "noninteractive" };
  const result = spawnSync(cmd, args, { cwd: root, stdio: "inherit", env });
  if (result.status !== 0)
    fail(`\`${cmd} ${args.join(" ")}\` failed (exit ${result.status ?? result.signal}).`);
}

// 1. npm dependencies: install when node_modules is missing or older than the lockfile.
const lock = join(root, "package-lock.json");
const installed = join(root, "node_modules", ".package-lock.json");
if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
  say("installing npm dependencies (npm ci)...");
  run("npm", ["ci", "--no-audit", "--no-fund"]);
}

// 2. The pinned Node (devDependency "node"). node_modules/.bin/node must be it: vitest, tsc and the
// other tools start through `#!/usr/bin/env node`. The Node 22.13 package the packaging test runs
// (an optional dependency) has a bin called `node` too; `npm ci` links the pinned one (npm resolves
// such clashes in path order, and node_modules/node comes first), but an incremental
// `npm install` of that package can take the link, so it is put back here.
const pinnedNode = join(root, "node_modules", "node", "bin", "node");
const binNode = join(root, "node_modules", ".bin", "node");
if (!existsSync(pinnedNode)) fail(`${pinnedNode} is missing: run \`npm ci\` in ${root}.`);
const pinnedVersion = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).devDependencies.node;
const realBinNode = existsSync(binNode) ? realpathSync(binNode) : undefined;
if (realBinNode !== realpathSync(pinnedNode)) {
  say(
    `node_modules/.bin/node pointed at ${realBinNode ?? "nothing"}; linking it to the pinned Node ${pinnedVersion}.`,
  );
  rmSync(binNode, { force: true });
  symlinkSync(join("..", "node", "bin", "node"), binNode);
}

// 3. A browser: ask the library itself where it would find Chrome (one list of places, not two).
function findChrome() {
  try {
    return execFileSync(
      pinnedNode,
      ["--conditions=deckhand-source", "--no-warnings", join(root, "scripts", "find-chrome.ts")],
      { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] },
    ).trim();
  } catch {
    return "";
  }
}
const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
const has = (command) => spawnSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
const canApt = isRoot && has("apt-get");
let aptUpdated = false;
function aptInstall(pkg) {
  if (!aptUpdated) run("apt-get", ["update", "-qq"]);
  aptUpdated = true;
  run("apt-get", ["install", "-y", "-qq", "--no-install-recommends", pkg]);
}

let chrome = findChrome();
if (!chrome) {
  if (canApt) {
    say("no Chrome or Chromium found; installing Debian's chromium package...");
    aptInstall("chromium");
    chrome = findChrome();
  }
  if (!chrome) {
    fail(
      "No Chrome or Chromium was found. Install one (Debian/Ubuntu: `sudo apt-get install chromium`) " +
        "or set CHROME_PATH to its executable.",
    );
  }
}
say(`browser: ${chrome}`);

// 4. For the tests: a virtual display for the windowed-browser tests.
if (forTests && !has("Xvfb")) {
  if (canApt) {
    say("installing Debian's xvfb package (a virtual display for the headless: false tests)...");
    aptInstall("xvfb");
  } else {
    say("Xvfb not found: the tests of a windowed browser (headless: false) will be skipped.");
  }
}

// 5. For the tests: nginx, the round-robin load balancer in front of the cluster tests' nodes (the
// test starts its own nginx on loopback with a configuration and prefix of its own; the package's
// service is never used).
const hasNginx = () => has("nginx") || existsSync("/usr/sbin/nginx");
if (forTests && !hasNginx()) {
  if (canApt) {
    say("installing Debian's nginx package (the load balancer of the cluster tests)...");
    aptInstall("nginx");
  } else {
    say("nginx not found: the cluster tests (several nodes behind a load balancer) will be skipped.");
  }
}

// 6. For the service (npm start), the benchmarks' service and the tests (one starts the service as
// npm start does): jemalloc, the allocator the service runs with where the machine has it (see
// service-node-flags.mjs: glibc's malloc keeps the memory of large CDP messages). Without it the
// service runs on glibc's malloc, and says so.
const runFile = handOver?.[0]?.replace(/\\/g, "/") ?? "";
const isService = runFile.endsWith("packages/server/src/cli.ts");
const isBench = runFile.endsWith("bench/run.ts");
if (
  (isService || isBench || forTests) &&
  process.platform === "linux" &&
  process.env.DECKHAND_MALLOC !== "system" &&
  !findJemalloc()
) {
  if (canApt) {
    say("installing Debian's libjemalloc2 package (the service's memory allocator)...");
    aptInstall("libjemalloc2");
  } else {
    say(
      "jemalloc not found: the service runs on glibc's malloc, whose memory grows under large CDP " +
        'messages (Debian/Ubuntu: `sudo apt-get install libjemalloc2`; README "Operations: memory").',
    );
  }
}

// 7. Hand over. The child gets a process group of its own, so a signal sent to ours (Ctrl-C in a
// terminal, `kill -- -PGID`, a supervisor stopping the group) reaches it exactly once, through
// the relay below: a second SIGINT would turn the service's graceful stop into an abrupt one.
if (handOver !== undefined) {
  const [file, ...args] = handOver;
  // The service (npm start) runs with its memory settings; see service-node-flags.mjs.
  const nodeFlags = isService ? SERVICE_NODE_FLAGS : [];
  const { env, allocator } = isService ? serviceEnvironment() : { env: process.env, allocator: undefined };
  if (isService) say(`memory allocator: ${allocator ?? "glibc's malloc (no jemalloc found)"}`);
  const child = spawn(pinnedNode, ["--conditions=deckhand-source", ...nodeFlags, file, ...args], {
    cwd: process.cwd(),
    stdio: "inherit",
    detached: true,
    env,
  });
  const relay = { SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGHUP: "SIGTERM" }; // a closed terminal stops it gracefully
  const onSignal = (signal) => child.kill(relay[signal]);
  for (const signal of Object.keys(relay)) process.on(signal, onSignal);
  child.on("error", (error) => fail(`could not start ${pinnedNode}: ${error.message}`));
  child.on("exit", (code, signal) => {
    for (const name of Object.keys(relay)) process.off(name, onSignal);
    // Exit as the child did, so that `npm start` reports what really happened.
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
