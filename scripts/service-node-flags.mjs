// How the service runs when this repository starts it (`npm start`, and the benchmarks' service):
// its Node flags and its memory allocator. Plain JavaScript: scripts/setup.mjs imports it on
// whatever Node the machine has.
//
// --max-semi-space-size=16: V8 grows its young generation with the rate of allocation, and on
// Node 24 it goes up to two 64 MB semi-spaces (128 MB of new space) under a busy service's load
// (many small objects per request, each short-lived), and gives it back only when it sees the
// process idle: the service's memory rose by a third in a steady 15-minute soak and stayed up.
// Capped at 16 MB (32 MB of new space, Node 18's default), the young generation is collected more
// often, each collection as cheap (it copies only what survives). See README "Operations" and the
// soak figures.
//
// --heap-growing-percent=50: after each full collection V8 sets the old generation's next limit
// at the live size times a factor it picks from how fast it collects against how fast the program
// allocates, up to 4 for a small heap. The service's live heap is 45-75 MB, so V8 let it fill to
// 178 MB of garbage before the next full collection (heap total up to 204 MB), and the process
// kept the memory of each such peak: its RSS rose by 38 % in a quiet 15-minute soak. A fixed factor
// of 1.5 collects sooner (each full collection is mostly concurrent, of a heap that small): the heap
// total stayed within 100-118 MB, the RSS rose 7-9 % (two soaks), the operations as many and as
// fast. It cannot be given in NODE_OPTIONS (Node allows only a few V8 flags there): pass it on
// node's command line.
import { existsSync } from "node:fs";

export const SERVICE_NODE_FLAGS = ["--max-semi-space-size=16", "--heap-growing-percent=50"];

// jemalloc instead of glibc's malloc, loaded with LD_PRELOAD (Debian's libjemalloc2). A tenant
// sending CDP messages of several megabytes makes the service allocate, per message, one buffer of
// that size and a hundred-odd socket reads of 64 KiB that live until the message is passed on;
// glibc's main arena (the brk heap) interleaves them with the service's small long-lived
// allocations and can only give back its top, so its resident size ratchets up: 12 to 90 MB in a
// 12-minute soak under such a flood (the service's RSS +12 % and still rising), while V8's heap
// stayed put. glibc's tunables (two arenas, a fixed mmap threshold) did not stop it; with jemalloc
// the same run stayed flat (+3 %) and lower. README "Operations: memory".
//
// Chromium is not affected by the preload: it defines malloc itself, and an executable's own
// symbols come before a preloaded library's.
const JEMALLOC_PATHS = [
  "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
  "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
  "/usr/lib64/libjemalloc.so.2",
  "/usr/lib/libjemalloc.so.2",
  "/usr/local/lib/libjemalloc.so.2",
];

/** The jemalloc library on this machine, or undefined (not Linux, not installed). */
export function findJemalloc() {
  if (process.platform !== "linux") return undefined;
  return JEMALLOC_PATHS.find((path) => existsSync(path));
}

/**
 * The environment to start the service in: `env` with jemalloc preloaded when the machine has it,
 * unless DECKHAND_MALLOC=system asks for glibc's, or LD_PRELOAD already names a jemalloc.
 * `allocator` says which one the service gets.
 */
export function serviceEnvironment(env = process.env) {
  const preload = env.LD_PRELOAD ?? "";
  if (env.DECKHAND_MALLOC === "system")
    return { env, allocator: "the system's malloc (DECKHAND_MALLOC=system)" };
  if (/jemalloc/.test(preload)) return { env, allocator: "jemalloc (LD_PRELOAD)" };
  const jemalloc = findJemalloc();
  if (!jemalloc) return { env, allocator: undefined };
  return {
    env: { ...env, LD_PRELOAD: preload ? `${jemalloc} ${preload}` : jemalloc },
    allocator: `jemalloc (${jemalloc})`,
  };
}
