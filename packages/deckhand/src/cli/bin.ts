#!/usr/bin/env node
// The `deckhand` executable (package.json "bin"): runs the CLI and exits with its code.

import { EXIT, main } from "./main.ts";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = EXIT.other;
  },
);
