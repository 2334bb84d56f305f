// The processes of the benchmarks from /proc: a process's descendants, its Chromium ones, a
// field of its status or smaps_rollup (memory), its open file descriptors.

import { readdirSync, readFileSync } from "node:fs";

function parentsMap(): Map<number, number[]> {
  const map = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      map.set(ppid, [...(map.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone
    }
  }
  return map;
}

export function descendants(root: number): number[] {
  const map = parentsMap();
  const out: number[] = [];
  const stack = [...(map.get(root) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(map.get(pid) ?? []));
  }
  return out;
}

export function kbField(path: string, field: string): number {
  try {
    const found = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(path, "utf8"));
    return found ? Number(found[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

export function isChromium(pid: number): boolean {
  try {
    return /chrom/i.test(readFileSync(`/proc/${pid}/comm`, "utf8"));
  } catch {
    return false;
  }
}

/** PSS of these processes together (bytes): shared pages are split between their users, not counted twice. */
export function pssBytes(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + kbField(`/proc/${pid}/smaps_rollup`, "Pss"), 0);
}
