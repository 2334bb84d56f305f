// Prints the Chrome executable the library would use, or exits 1. Used by scripts/setup.mjs.
import { findChrome } from "deckhand";

const path = findChrome();
if (!path) process.exit(1);
console.log(path);
