#!/usr/bin/env node
// The deckhand-server command.
//
// Installed (the package under node_modules): runs the compiled ../dist/cli.js.
// In this repository: runs ../src/cli.ts, so that a stale build never stands in for the source.
// Node 24 strips TypeScript types by itself; the resolve hook below adds the "deckhand-source"
// condition so that `import "deckhand"` finds the library's source as well (what
// --conditions=deckhand-source does).
//
// Before anything else it checks the Node version: on an older Node the service would die on its
// first import (node:sqlite) with an error that does not say what to do. Keep this file to syntax
// and APIs that old Node versions understand, so that the check gets to speak.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const fail = (message) => {
  process.stderr.write(`deckhand-server: ${message}\n`);
  process.exit(1);
};

// The oldest Node it runs on is the package's "engines" field (">=22.13"): one place to change.
const { engines } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
const [needMajor, needMinor] = /(\d+)\.(\d+)/.exec(engines.node).slice(1).map(Number);
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < needMajor || (major === needMajor && minor < needMinor)) {
  fail(
    `needs Node.js ${needMajor}.${needMinor} or newer (it uses the built-in node:sqlite module); this is ` +
      `Node.js ${process.versions.node} at ${process.execPath}. Install Node.js ${needMajor}.${needMinor} ` +
      "or newer and start it again.",
  );
}

const installed = fileURLToPath(import.meta.url)
  .split(/[\\/]/)
  .includes("node_modules");
if (installed) {
  await import(new URL("../dist/cli.js", import.meta.url).href);
} else {
  if (!process.features.typescript) {
    fail(
      `in the repository it runs its TypeScript source, which needs Node.js 24 (this is ${process.versions.node}): ` +
        "use `npm start` from the repository root, which runs the Node the repository pins.",
    );
  }
  const { registerHooks } = await import("node:module");
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const conditions = [...(context.conditions ?? []), "deckhand-source"];
      return nextResolve(specifier, { ...context, conditions });
    },
  });
  await import(new URL("../src/cli.ts", import.meta.url).href);
}
