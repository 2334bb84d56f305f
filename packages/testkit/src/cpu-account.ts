/**
 * Per-file CPU accounting for the test suite, on when DECKHAND_TEST_CPU_LOG names a file (each
 * package's vitest config lists this as a setup file). On a shared machine a file's wall time
 * says as much about its neighbours as about itself; its CPU time does not. For each test file
 * this appends one JSON line: the file, its wall time and its CPU seconds.
 *
 * The CPU is that of the test's worker and of every process it started (Chromium and its
 * renderers, servers, CLI processes). As root on Linux with cgroup v1's cpuacct, the worker moves
 * itself into a cpuacct group of its own, which counts every descendant, even one that was killed
 * and reaped by someone else (a killed browser's renderers are). Otherwise it reads
 * /proc/self/stat: the worker plus the children it reaped itself, which misses a killed browser's
 * helpers ("source" in the line says which). Without the variable it does nothing.
 */
import { spawn } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, expect } from "vitest";

const logFile = process.env.DECKHAND_TEST_CPU_LOG;
const CPUACCT = "/sys/fs/cgroup/cpuacct";
// Clock ticks per second of /proc's counters: 100 on every Linux the project runs on.
const TICKS = 100;
let parent = CPUACCT;

function procSeconds(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15,
  // cutime 16, cstime 17.
  const f = stat
    .slice(stat.lastIndexOf(")") + 2)
    .split(" ")
    .map(Number)
    .slice(11, 15);
  return f.reduce((sum, ticks) => sum + ticks, 0) / TICKS;
}

/** A cpuacct group holding this process (and so everything it starts from now on), or undefined. */
function ownGroup(): string | undefined {
  // Under the group the worker is in (a whole run may be in one of its own, which then counts
  // its files too).
  const line = readFileSync("/proc/self/cgroup", "utf8").match(/^\d+:cpuacct:(.*)$/m);
  if (!line?.[1]) return undefined;
  parent = join(CPUACCT, line[1]);
  sweepGroups();
  const dir = join(parent, `deckhand-test-${process.pid}`);
  try {
    mkdirSync(dir);
    writeFileSync(join(dir, "cgroup.procs"), String(process.pid));
    return dir;
  } catch {
    try {
      rmdirSync(dir);
    } catch {}
    return undefined;
  }
}

/**
 * Leaves the group and removes it. A browser still exiting keeps it busy for a moment, and a
 * group cannot be removed while it holds a process: then a detached shell (outside the group)
 * removes it once it is empty, trying for at most a minute.
 */
function leaveGroup(dir: string): void {
  try {
    writeFileSync(join(parent, "cgroup.procs"), String(process.pid));
    rmdirSync(dir);
  } catch {
    spawn(
      "sh",
      ["-c", 'for i in $(seq 300); do rmdir "$1" 2>/dev/null && exit 0; sleep 0.2; done', "sh", dir],
      { detached: true, stdio: "ignore" },
    ).unref();
  }
}

/** Removes empty groups an earlier run left (a worker killed before its afterAll). */
function sweepGroups(): void {
  for (const name of readdirSync(parent)) {
    if (!name.startsWith("deckhand-test-")) continue;
    try {
      rmdirSync(join(parent, name));
    } catch {
      // in use, or not ours to remove
    }
  }
}

if (logFile && existsSync("/proc/self/stat")) {
  // Counted from here, before the test file is imported: its import and transform are its cost too.
  const group = existsSync(CPUACCT) ? ownGroup() : undefined;
  const used = group ? () => Number(readFileSync(join(group, "cpuacct.usage"), "utf8")) / 1e9 : procSeconds;
  const start = { cpu: used(), at: performance.now() };
  afterAll(() => {
    const line = {
      file: String(expect.getState().testPath),
      wallS: +((performance.now() - start.at) / 1000).toFixed(2),
      cpuS: +(used() - start.cpu).toFixed(2),
      source: group ? "cpuacct" : "proc",
    };
    if (group) leaveGroup(group);
    appendFileSync(logFile, `${JSON.stringify(line)}\n`);
  });
}
