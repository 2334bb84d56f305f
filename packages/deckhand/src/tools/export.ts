// The tool that writes what this session did as a script to keep and run.

import { z } from "zod";
import { SCRIPT_FORMATS } from "../export/script.ts";
import { respond } from "./response.ts";
import { define } from "./tool.ts";

export const exportTool = define({
  name: "export",
  title: "The session so far as a script",
  description:
    "Writes what this session did as a script to keep and run: a Playwright test (playwright-test: no Deckhand, no model; each element by a locator that matched it alone when the step ran) or a Deckhand program of act(action) steps (deckhand: no model while the page is unchanged, the model finds a moved element again). Variables stay %name% and are read from the environment; their values are never written.",
  input: z.object({
    format: z.enum(SCRIPT_FORMATS).optional().describe("playwright-test (default) or deckhand."),
    assertExtracts: z
      .boolean()
      .optional()
      .describe("playwright-test: each extract becomes an expect that the page shows what was extracted."),
  }),
  // Writes text from the session's record; the page is not touched.
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  positional: ["format"],
  onPage: false,
  async run(dh, { format, assertExtracts }) {
    const script = await dh.exportScript({
      ...(format ? { format } : {}),
      ...(assertExtracts ? { assertExtracts } : {}),
    });
    return respond.text(script);
  },
});
