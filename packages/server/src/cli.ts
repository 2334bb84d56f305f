// Entry point of the deckhand-server command (bin/deckhand-server.js loads this file, or its
// compiled dist/cli.js). See cli/help.ts for the commands and flags.

import { main } from "./cli/main.ts";

// Node 22-24 announce node:sqlite as experimental on first load. The service depends on it on
// purpose, and the line would only alarm whoever reads the output, so that one warning is dropped.
const emitWarning = process.emitWarning;
process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
  const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
  if (type === "ExperimentalWarning" && String(warning).includes("SQLite")) return;
  return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
} as typeof process.emitWarning;

process.exitCode = await main(process.argv.slice(2), {
  env: process.env,
  out: process.stdout,
  err: process.stderr,
});
