// The processes of the benchmarks from /proc (a process's descendants: the testkit's processTree):
// which are Chromium, a field of their status or smaps_rollup (memory), their open file descriptors.

import { readdirSync, readFileSync } from "node:fs";

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
