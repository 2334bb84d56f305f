// The Node flags the service runs with when this repository starts it (`npm start`, and the
// benchmarks' service). Plain JavaScript: scripts/setup.mjs imports it on whatever Node the
// machine has.
//
// --max-semi-space-size=16: V8 grows its young generation with the rate of allocation, and on
// Node 24 it goes up to two 64 MB semi-spaces (128 MB of new space) under a busy service's load
// (many small objects per request, each short-lived), and gives it back only when it sees the
// process idle: the service's memory rose by a third in a steady 15-minute soak and stayed up.
// Capped at 16 MB (32 MB of new space, Node 18's default), the young generation is collected more
// often, each collection as cheap (it copies only what survives). See README "Operations" and the
// soak figures.
export const SERVICE_NODE_FLAGS = ["--max-semi-space-size=16"];
