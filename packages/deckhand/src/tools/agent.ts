// The tool that carries out a task of several steps by itself, with the model.

import { z } from "zod";
import type { Variables } from "../types.ts";
import { respond } from "./response.ts";
import { define, variables } from "./tool.ts";

export const agentTool = define({
  name: "agent",
  title: "Carry out a task of several steps",
  description:
    "Works on a task of several steps by itself (reading the page, acting, navigating) until it is done or runs out of steps, with a model. Answers whether it succeeded, its final message, and the steps it took.",
  input: z.object({
    task: z.string().min(1).describe("The task, in plain words."),
    maxSteps: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe("Most model calls before it stops (default 20)."),
    variables,
  }),
  // It acts and navigates as act and navigate do.
  annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  positional: ["task"],
  onPage: true,
  async run(dh, { task, maxSteps, variables: values }) {
    const result = await dh.agent().execute({
      instruction: task,
      ...(maxSteps ? { maxSteps } : {}),
      ...(values ? { variables: values as Variables } : {}),
    });
    const data = {
      success: result.success,
      completed: result.completed,
      message: result.message,
      actions: result.actions,
    };
    const steps = result.actions.map(
      (a, i) => `${i + 1}. ${a.type}${a.arguments ? ` ${JSON.stringify(a.arguments)}` : ""}`,
    );
    return respond.json(data, { ok: result.success, text: [result.message, ...steps].join("\n") });
  },
});
