// Writes the README's tool list from the tool definitions (packages/deckhand/src/tools/):
//   node scripts/setup.mjs --quiet --run scripts/tools-readme.ts
// packages/deckhand/test/tools/readme.test.ts fails when the README no longer matches.

import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { withToolsSection } from "../packages/deckhand/src/tools/readme.ts";

const readme = fileURLToPath(new URL("../README.md", import.meta.url));
const before = readFileSync(readme, "utf8");
const after = withToolsSection(before);
if (after !== before) writeFileSync(readme, after);
console.log(after === before ? "README.md: the tool list is up to date." : "README.md: tool list written.");
