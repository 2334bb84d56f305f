#!/usr/bin/env node
// The deckhand-server command.
//
// Published package: runs the compiled ../dist/cli.js.
// In this repository (no build, so no dist/): runs ../src/cli.ts directly, since Node 24 strips
// TypeScript types by itself; the resolve hook below adds the "deckhand-source" condition so that
// `import "deckhand"` finds the library's source as well (what --conditions=deckhand-source does).

import { existsSync } from "node:fs";

const compiled = new URL("../dist/cli.js", import.meta.url);

if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { registerHooks } = await import("node:module");
  registerHooks({
    resolve(specifier, context, nextResolve) {
      const conditions = [...(context.conditions ?? []), "deckhand-source"];
      return nextResolve(specifier, { ...context, conditions });
    },
  });
  await import(new URL("../src/cli.ts", import.meta.url).href);
}
