// Which TCP sockets a set of processes listens on, read from /proc (Linux): the socket inodes each
// process holds (/proc/<pid>/fd) matched against the LISTEN entries of /proc/net/tcp and tcp6. A
// test of "this browser has no DevTools port" asks this of the browser and all its descendants.

import { readdirSync, readFileSync, readlinkSync } from "node:fs";

export interface ListeningSocket {
  pid: number;
  address: string;
  port: number;
}

/** `pid` and every process below it (children, grandchildren, ...), that are still there. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // The parent id is the second field after the command name (which is in parentheses).
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(parent) ?? [];
      list.push(Number(entry));
      children.set(parent, list);
    } catch {
      // exited while we looked
    }
  }
  const tree: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift()!;
    tree.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return tree;
}

function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return inodes;
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match) inodes.add(match[1]!);
    } catch {
      // closed while we looked
    }
  }
  return inodes;
}

function hexAddress(hex: string): string {
  if (hex.length === 8) {
    // IPv4, little-endian.
    return [3, 2, 1, 0].map((i) => Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join(".");
  }
  // IPv6: four little-endian 32-bit words.
  const words = [0, 1, 2, 3].map((w) => hex.slice(w * 8, w * 8 + 8));
  const bytes = words.flatMap((word) => [3, 2, 1, 0].map((i) => word.slice(i * 2, i * 2 + 2)));
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(`${bytes[i]}${bytes[i + 1]}`.replace(/^0+(?=.)/, ""));
  return groups.join(":");
}

/** Listening TCP sockets (IPv4 and IPv6) by inode. */
function listeningByInode(): Map<string, { address: string; port: number }> {
  const found = new Map<string, { address: string; port: number }>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const fields = line.trim().split(/\s+/);
      // sl local_address rem_address st ... inode (the 10th field)
      if (fields.length < 10 || fields[3] !== "0A") continue;
      const [addressHex, portHex] = fields[1]!.split(":");
      found.set(fields[9]!, { address: hexAddress(addressHex!), port: Number.parseInt(portHex!, 16) });
    }
  }
  return found;
}

/** The TCP sockets in LISTEN state that any of `pids` holds. */
export function listeningSockets(pids: readonly number[]): ListeningSocket[] {
  const listening = listeningByInode();
  const found: ListeningSocket[] = [];
  for (const pid of pids) {
    for (const inode of socketInodes(pid)) {
      const socket = listening.get(inode);
      if (socket) found.push({ pid, ...socket });
    }
  }
  return found;
}

/** Every TCP socket in LISTEN state on this machine (this network namespace), by address and port. */
export function allListeningSockets(): { address: string; port: number }[] {
  return [...listeningByInode().values()];
}
