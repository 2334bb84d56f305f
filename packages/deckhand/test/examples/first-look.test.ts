// `npm run example` (examples/first-look.ts) on a fresh machine with no model key: it must drive
// the bundled shop end to end with explicit instructions, spend no tokens, and leave nothing
// behind.

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, it } from "vitest";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../../../", import.meta.url));

it("completes the shop's checkout with explicit instructions and no key", async () => {
  const env = { ...process.env };
  for (const key of ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY"]) delete env[key];
  const { stdout } = await run(
    process.execPath,
    ["--conditions=deckhand-source", "--no-warnings", "examples/first-look.ts"],
    { cwd: root, env, timeout: 60_000 },
  );
  expect(stdout).toContain('The instruction "click Add to cart" needs a model: 3 visible elements');
  expect(stdout).toContain("In your cart: Blue shirt.");
  expect(stdout.match(/^ {2}ok {2}/gm)).toHaveLength(5);
  expect(stdout).toContain("Order placed for Ada Lovelace: Blue shirt to Germany, gift wrapped.");
  expect(stdout).toContain("Model tokens used: 0");
  // The variable's value is typed into the page but never printed in a result.
  expect(stdout).not.toContain("ada@example.com");
}, 90_000);
