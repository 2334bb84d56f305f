// The README's main command as a new user meets it, on the untouched clone (called by .ci/run
// before anything else is installed): `npm start` must install what is missing, start the
// service, answer HTTP and run a browser session; Ctrl-C (SIGINT to its process group) must stop
// it with no server and no Chromium left behind. Plain JavaScript: it runs on the machine's Node.
//
// Every process `npm start` starts carries a marker in its environment (Chromium inherits it
// too), so whatever is still running afterwards is found in /proc, whatever its process group.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const STARTUP_LIMIT_MS = 20 * 60_000; // the first start runs npm ci, maybe apt-get install chromium
const STOP_LIMIT_MS = 60_000;
const MARK = `DECKHAND_FIRST_RUN=${process.pid}-${Date.now()}`;
const [markName, markValue] = MARK.split("=");

const say = (msg) => console.log(`[first-run] ${msg}`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Pids of the processes that carry this run's marker (Linux only: /proc). */
function marked() {
  if (!existsSync("/proc/self/environ")) return [];
  const pids = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, "latin1").split("\0").includes(MARK))
        pids.push(Number(entry));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}
/** A process's arguments from /proc, or undefined once it is gone (or not ours to read). */
const argsOf = (pid) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "latin1").split("\0");
  } catch {
    return undefined;
  }
};
const commandOf = (pid) => argsOf(pid)?.join(" ").trim().slice(0, 160) ?? "(gone)";

let output = "";
let exited;
const child = spawn("npm", ["start", "--", "--port", "0"], {
  cwd: root,
  detached: true, // its own process group: the SIGINT below is the Ctrl-C of a terminal
  env: { ...process.env, [markName]: markValue },
  stdio: ["ignore", "pipe", "pipe"],
});
const exitedPromise = new Promise((resolve) => {
  child.on("exit", (code, signal) => {
    exited = { code, signal };
    resolve(exited);
  });
});
for (const stream of [child.stdout, child.stderr]) {
  stream.setEncoding("utf8");
  stream.on("data", (text) => {
    output += text;
    // The first start prints a fresh API key; it is this throwaway database's, but still no log gets it.
    process.stdout.write(text.replace(/\bdh_[\w-]+/g, "dh_<redacted>"));
  });
}

async function cleanUpAndFail(reason) {
  console.error(`[first-run] FAILED: ${reason}`);
  for (const pid of marked()) {
    console.error(`[first-run]   still running: ${pid} ${commandOf(pid)}`);
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  process.exit(1);
}

async function waitFor(what, limitMs, check) {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (exited)
      return cleanUpAndFail(`npm start exited (${exited.signal ?? `code ${exited.code}`}) before ${what}`);
    if (Date.now() > deadline) return cleanUpAndFail(`no ${what} within ${limitMs / 1000} s`);
    await sleep(500);
  }
}

say("npm start -- --port 0");
const started = Date.now();
const url = await waitFor(
  "listening line",
  STARTUP_LIMIT_MS,
  () => /listening on (http:\/\/\S+)/.exec(output)?.[1],
);
const key = /\b(dh_[\w-]+)/.exec(output)?.[1];
if (!key) await cleanUpAndFail("the first start printed no API key");

// Poll until it answers HTTP, then use it as a client would: start a browser session.
await waitFor("HTTP answer", 60_000, () =>
  fetch(`${url}/v1/openapi.json`).then(
    (response) => response.status === 200,
    () => false,
  ),
);
say(`${url} answers HTTP, ${Math.round((Date.now() - started) / 1000)} s after npm start`);
const response = await fetch(`${url}/v1/sessions/start`, {
  method: "POST",
  headers: { "content-type": "application/json", "x-platform-api-key": key },
  body: "{}",
});
const body = await response.json().catch(() => undefined);
if (response.status !== 200 || body?.success !== true || typeof body.data?.sessionId !== "string") {
  await cleanUpAndFail(`POST /v1/sessions/start answered ${response.status} ${JSON.stringify(body)}`);
}
const browsers = marked().filter((pid) => /chrom/i.test(commandOf(pid)));
if (existsSync("/proc/self/environ") && browsers.length === 0) {
  await cleanUpAndFail("a session started, but no Chromium of this run is running");
}
say(`session ${body.data.sessionId} runs in Chromium (${browsers.length} processes)`);
// The service runs with its memory settings (scripts/service-node-flags.mjs; README "Operations: memory").
const { SERVICE_NODE_FLAGS } = await import("../scripts/service-node-flags.mjs");
// The Node that runs the service itself (not npm's shell, nor setup.mjs handing over to it).
const service = marked().find((pid) => {
  const args = argsOf(pid) ?? [];
  return (
    args.includes("packages/server/src/cli.ts") && !args.includes("scripts/setup.mjs") && !args.includes("-c")
  );
});
if (existsSync("/proc/self/environ")) {
  const args = (service && argsOf(service)) || [];
  const missing = SERVICE_NODE_FLAGS.filter((flag) => !args.includes(flag));
  if (!service || missing.length > 0)
    await cleanUpAndFail(
      `the service does not run with ${missing.join(" ") || "its flags"} (${service ? commandOf(service) : "not found"})`,
    );
  say(`the service runs with ${SERVICE_NODE_FLAGS.join(" ")}`);
  // ... and with jemalloc as its allocator (setup.mjs installs Debian's libjemalloc2 for it when it
  // can; as root with apt-get, as CI runs, it must have).
  const maps = readFileSync(`/proc/${service}/maps`, "utf8");
  if (!/libjemalloc\.so/.test(maps)) {
    if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get"))
      await cleanUpAndFail("the service does not run with jemalloc (not in its memory map)");
    else say("the service runs on glibc's malloc (no jemalloc, and setup could not install one here)");
  } else say("the service's allocator is jemalloc");
}

// Ctrl-C, as a person in a terminal stops it.
process.kill(-child.pid, "SIGINT");
await Promise.race([exitedPromise, sleep(STOP_LIMIT_MS)]);
if (!exited) await cleanUpAndFail(`npm start did not stop within ${STOP_LIMIT_MS / 1000} s of SIGINT`);
// Chromium's watchdog removes its profile a moment after the browser has gone.
const leftovers = await (async () => {
  for (let i = 0; i < 20; i++) {
    if (marked().length === 0) return [];
    await sleep(500);
  }
  return marked();
})();
if (leftovers.length > 0) await cleanUpAndFail(`${leftovers.length} processes outlived npm start`);
say(`stopped cleanly (${exited.signal ?? `exit ${exited.code}`}); nothing of it is left running`);

// The first start's database and key: the test run after this starts from the clone as it was.
rmSync(join(root, ".deckhand"), { recursive: true, force: true });
process.exit(0); // without waiting for the stop timer above
