// Tools that act on the page: one action described in plain words.

import { z } from "zod";
import type { Variables } from "../types.ts";
import { respond } from "./response.ts";
import { define, variables } from "./tool.ts";

export const actTool = define({
  name: "act",
  title: "Do one thing on the page",
  description:
    'Performs one action described in plain words: "click the Sign in button", "type %email% into the Email field", "select Germany from the Country dropdown". Explicit instructions like these need no model; others are carried out by the model. Answers whether it worked and what was done.',
  input: z.object({
    instruction: z.string().min(1).describe("What to do, in plain words."),
    variables,
  }),
  // A click may submit, buy or delete; the page it leads to may be any site.
  annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  positional: ["instruction"],
  onPage: true,
  async run(dh, { instruction, variables: values }) {
    const result = await dh.act(instruction, values ? { variables: values as Variables } : {});
    return respond.json(result, { ok: result.success, text: result.message });
  },
});
