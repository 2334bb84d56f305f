// The layering of the library, checked (part of `npm run lint`).
//
// Each folder of packages/deckhand/src has a DEPS.list that says what its files may import from
// the rest of the package: one entry per line, a file (`../errors.ts`) or a folder and everything
// under it (`../browser/`), relative to the folder. A `[name.ts]` line starts rules for that one
// file of the folder (used for the files at the top of src/); `[*]` for every file. A file may
// always import from its own folder and below. An entry written `type <path>` allows type-only
// imports of it (`import type`, `import { type A }`): the facade may name a lower layer's type
// without calling into it.
//
// npm packages are part of the layering too: `npm: <name>` allows a package (`npm: ws`, `npm: ai`),
// `npm: @scope/*` every package of a scope, with the same sections. A folder that may not import
// `ws` or `ai` cannot start a connection or call a model on its own. Node's own modules (`node:`)
// are free.
//
// Besides that:
// - in-page scripts (any `injected/` folder) import types only: they are sent to the page as
//   source text, where a runtime import cannot exist;
// - the service (packages/server) imports the library only through its public entry ("deckhand"),
//   never a file of its source;
// - a packages/deckhand test that imports the service declares it in the package's devDependencies;
// - the benchmarks (bench/) use the packages through their public entries ("deckhand",
//   "@deckhand/server", "@deckhand/testkit"); a source file a benchmark needs beyond those (an
//   internal it measures) is named, with why, in bench/DEPS.list.
//
// Exits 1 with one line per violation.

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const library = join(root, "packages/deckhand");
const src = join(library, "src");
const problems: string[] = [];

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === "node_modules" || name === "dist") return [];
    if (statSync(path).isDirectory()) return filesUnder(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

interface Import {
  specifier: string;
  typeOnly: boolean;
  line: number;
}

/** Static imports and re-exports (with whether they are type-only), and dynamic import() calls. */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const found: Import[] = [];
  const lineAt = (index: number) => text.slice(0, index).split("\n").length;
  const statement = /^\s*(import|export)\s+(type\s+)?([^;]*?)\s*from\s*["']([^"']+)["']/gms;
  for (const m of text.matchAll(statement)) {
    const names = m[3] ?? "";
    // `import { type A, type B }` is type-only too.
    const allTypes =
      /^\{[^}]*\}$/s.test(names.trim()) &&
      names
        .replace(/[{}]/g, "")
        .split(",")
        .map((n) => n.trim())
        .filter(Boolean)
        .every((n) => n.startsWith("type "));
    found.push({ specifier: m[4]!, typeOnly: Boolean(m[2]) || allTypes, line: lineAt(m.index) });
  }
  for (const m of text.matchAll(/^\s*import\s+["']([^"']+)["']/gm))
    found.push({ specifier: m[1]!, typeOnly: false, line: lineAt(m.index) });
  for (const m of text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
    // `import("./x.ts").T` in a type position is a type import.
    const after = text.slice(m.index + m[0].length, m.index + m[0].length + 1);
    found.push({ specifier: m[1]!, typeOnly: after === ".", line: lineAt(m.index) });
  }
  return found;
}

interface Rules {
  folder: string;
  /** Rules by file name ("*" for every file of the folder). */
  byFile: Map<string, string[]>;
}

/** `npm: ai` -> "ai"; undefined for an entry that is a path. */
function npmEntry(entry: string): string | undefined {
  const m = /^npm:\s*(\S+)$/.exec(entry);
  return m?.[1];
}

/** The package an import specifier names ("@ai-sdk/openai/x" -> "@ai-sdk/openai"). */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

/** The entries that apply to one file: its folder's `[*]` and its own section. */
function entriesFor(rules: Rules, file: string): string[] {
  return [...(rules.byFile.get("*") ?? []), ...(rules.byFile.get(relative(rules.folder, file)) ?? [])];
}

function allowsPackage(rules: Rules, file: string, name: string): boolean {
  return entriesFor(rules, file).some((entry) => {
    const allowedName = npmEntry(entry);
    if (!allowedName) return false;
    return allowedName.endsWith("/*") ? name.startsWith(allowedName.slice(0, -1)) : name === allowedName;
  });
}

function readRules(folder: string): Rules | undefined {
  const file = join(folder, "DEPS.list");
  if (!existsSync(file)) return undefined;
  const byFile = new Map<string, string[]>();
  let section = "*";
  for (const raw of readFileSync(file, "utf8").split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    if (!line) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      if (!byFile.has(section)) byFile.set(section, []);
      continue;
    }
    const list = byFile.get(section) ?? [];
    list.push(line);
    byFile.set(section, list);
  }
  return { folder, byFile };
}

/** The DEPS.list that governs a file: the nearest one in its folder or above, within src/. */
function rulesFor(file: string): Rules | undefined {
  for (let dir = dirname(file); dir.startsWith(src); dir = dirname(dir)) {
    const rules = readRules(dir);
    if (rules) return rules;
  }
  return undefined;
}

function allowed(rules: Rules, file: string, target: string, typeOnly: boolean): boolean {
  if (target.startsWith(rules.folder + sep)) {
    // Within the folder of the rules. For src/ itself only files of its own subfolders count as
    // "own": the top-level files are checked one by one below.
    if (rules.folder !== src) return true;
    if (dirname(target) !== src && dirname(file) !== src) return true;
  }
  return entriesFor(rules, file).some((raw) => {
    if (npmEntry(raw)) return false;
    const typesOnly = raw.startsWith("type ");
    if (typesOnly && !typeOnly) return false;
    const entry = typesOnly ? raw.slice(5).trim() : raw;
    const path = resolve(rules.folder, entry);
    return entry.endsWith("/") ? target.startsWith(path + sep) : target === path;
  });
}

// ---------- the library ----------

for (const file of filesUnder(src)) {
  const rules = rulesFor(file);
  const shown = relative(root, file);
  if (!rules) {
    problems.push(`${shown}: no DEPS.list in its folder or above (packages/deckhand/src)`);
    continue;
  }
  for (const imp of importsOf(file)) {
    if (!imp.specifier.startsWith(".")) {
      if (imp.specifier.startsWith("node:")) continue;
      const name = packageName(imp.specifier);
      if (!allowsPackage(rules, file, name)) {
        problems.push(
          `${shown}:${imp.line}: imports the npm package ${name}, which ${relative(root, join(rules.folder, "DEPS.list"))} does not allow (an \`npm: ${name}\` entry)`,
        );
      }
      continue;
    }
    const target = resolve(dirname(file), imp.specifier);
    if (file.includes(`${sep}injected${sep}`) && !imp.typeOnly) {
      problems.push(
        `${shown}:${imp.line}: in-page code imports only types, but imports ${imp.specifier} (it is sent to the page as source)`,
      );
    }
    if (!allowed(rules, file, target, imp.typeOnly)) {
      problems.push(
        `${shown}:${imp.line}: imports ${relative(src, target)}, which ${relative(root, join(rules.folder, "DEPS.list"))} does not allow`,
      );
    }
  }
}

// ---------- the service uses only the public entry ----------

for (const file of filesUnder(join(root, "packages/server"))) {
  for (const imp of importsOf(file)) {
    const s = imp.specifier;
    const intoSource = s.startsWith(".") && resolve(dirname(file), s).startsWith(library + sep);
    if (intoSource || s.startsWith("deckhand/")) {
      problems.push(
        `${relative(root, file)}:${imp.line}: imports ${s}; the service uses the library only through "deckhand" (its public entry). Export what it needs from packages/deckhand/src/index.ts.`,
      );
    }
  }
}

// ---------- library tests that use the service declare it ----------

const manifest = JSON.parse(readFileSync(join(library, "package.json"), "utf8")) as {
  devDependencies?: Record<string, string>;
  dependencies?: Record<string, string>;
};
const declared = { ...manifest.dependencies, ...manifest.devDependencies };
for (const file of [...filesUnder(join(library, "test")), ...filesUnder(join(library, "bench"))]) {
  for (const imp of importsOf(file)) {
    const name = imp.specifier.startsWith("@") ? imp.specifier.split("/").slice(0, 2).join("/") : undefined;
    if (name === "@deckhand/server" && !(name in declared)) {
      problems.push(
        `${relative(root, file)}:${imp.line}: imports ${name}, which packages/deckhand/package.json does not declare (add it to devDependencies)`,
      );
    }
  }
}

// ---------- the benchmarks use public entries, or what bench/DEPS.list declares ----------

const benchDir = join(root, "bench");
const benchRules = readRules(benchDir);
const benchAllowed = new Set(
  [...(benchRules?.byFile.values() ?? [])].flat().map((entry) => resolve(benchDir, entry)),
);
for (const file of filesUnder(benchDir)) {
  for (const imp of importsOf(file)) {
    const s = imp.specifier;
    const target = s.startsWith(".") ? resolve(dirname(file), s) : undefined;
    const intoPackages = target?.startsWith(join(root, "packages") + sep);
    if (/^(deckhand|@deckhand\/[^/]+)\/./.test(s) || (intoPackages && !benchAllowed.has(target!))) {
      problems.push(
        `${relative(root, file)}:${imp.line}: imports ${s}; a benchmark uses the packages through their public entries ("deckhand", "@deckhand/server", "@deckhand/testkit"), or a source file bench/DEPS.list names`,
      );
    }
  }
}

if (problems.length) {
  console.error(`Layering: ${problems.length} problem(s)\n${problems.map((p) => `  ${p}`).join("\n")}`);
  process.exit(1);
}
console.log("Layering: every import follows the DEPS.list rules.");
