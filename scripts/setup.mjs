#!/usr/bin/env node
// Makes a fresh clone runnable: installs the npm dependencies when they are missing or stale, and
// Debian's `chromium` when no Chrome or Chromium can be found (only as root with apt-get; otherwise
// it says what to install). With --tests (npm test) it also installs Debian's `xvfb`, the virtual
// display the tests of a windowed browser (headless: false) run on; without it they are skipped.
// Plain JavaScript on purpose: it runs on whatever Node the machine has, before the pinned Node 24
// from node_modules exists.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const quiet = process.argv.includes("--quiet");
const forTests = process.argv.includes("--tests");
const say = (msg) => {
  if (!quiet) console.error(`[setup] ${msg}`);
};

function run(cmd, args) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
  if (result.status !== 0) {
    console.error(`[setup] \`${cmd} ${args.join(" ")}\` failed (exit ${result.status ?? result.signal}).`);
    process.exit(result.status ?? 1);
  }
}

// 1. npm dependencies: install when node_modules is missing or older than the lockfile.
const lock = join(root, "package-lock.json");
const installed = join(root, "node_modules", ".package-lock.json");
if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
  say("installing npm dependencies (npm ci)...");
  run("npm", ["ci", "--no-audit", "--no-fund"]);
}

// 2. A browser: ask the library itself where it would find Chrome (one list of places, not two).
const node = join(root, "node_modules", ".bin", "node");
function findChrome() {
  try {
    return execFileSync(
      node,
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
    console.error(
      "[setup] No Chrome or Chromium was found. Install one (Debian/Ubuntu: `sudo apt-get install chromium`) " +
        "or set CHROME_PATH to its executable.",
    );
    process.exit(1);
  }
}
say(`browser: ${chrome}`);

// 3. For the tests: a virtual display for the windowed-browser tests.
if (forTests && !has("Xvfb")) {
  if (canApt) {
    say("installing Debian's xvfb package (a virtual display for the headless: false tests)...");
    aptInstall("xvfb");
  } else {
    say("Xvfb not found: the tests of a windowed browser (headless: false) will be skipped.");
  }
}
