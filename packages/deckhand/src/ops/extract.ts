// extract: data from the page into the caller's schema (or a text answer).
//
// URL fields are shown to the model as element ids and come back as the page's real URLs. An
// outline larger than one model window is not cut when the schema collects a list: it is read in
// windows and the lists are joined, so a 300-row table gives 300 items.

import { z } from "zod";
import type { LLMContentPart, LLMMessage } from "../llm/client.ts";
import { type SchemaInput, toResponseSchema } from "../llm/schema.ts";
import { findUrlFields, withUrlFieldsAsIds } from "../llm/url-fields.ts";
import { fitToBudget } from "../snapshot/budget.ts";
import { DEFAULT_TOKEN_BUDGET, takeSnapshot } from "../snapshot/snapshot.ts";
import { estimateTokens } from "../snapshot/tokens.ts";
import type { OperationContext } from "./context.ts";
import { EXTRACT_SYSTEM, userMessage } from "./prompts.ts";

export interface ExtractParams {
  instruction: string;
  schema?: SchemaInput;
  selector?: string;
  ignoreSelectors?: string[];
  screenshot?: boolean;
  /** Tokens of outline per model call. Default 24,000. */
  window?: number;
}

const textAnswer = z.object({ extraction: z.string().describe("The answer, as text.") });

/** Whether a JSON Schema collects a list (an array at the root or in a top-level field). */
function collectsList(schema: Record<string, unknown>): boolean {
  if (schema.type === "array") return true;
  const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
  return Object.values(properties ?? {}).some(
    (p) => p?.type === "array" || (Array.isArray(p?.type) && p.type.includes("array")),
  );
}

/**
 * Splits an outline into pieces of at most `window` tokens. Each piece starts with the lines it
 * sits under (its ancestors, and the header row of a table it continues) so it reads on its own.
 */
export function splitOutline(text: string, window: number): string[] {
  const lines = text.split("\n");
  const depthOf = (line: string) => (line.length - line.trimStart().length) >> 1;
  const pieces: string[] = [];
  let current: string[] = [];
  let size = 0;
  const context = (index: number): string[] => {
    const out: string[] = [];
    let depth = depthOf(lines[index]!);
    let header: string | undefined;
    for (let i = index - 1; i >= 0 && depth > 0; i--) {
      const line = lines[i]!;
      const d = depthOf(line);
      if (!header && d === depth && line.trimStart().startsWith("header:")) header = line;
      if (d < depth) {
        out.unshift(line);
        depth = d;
      }
    }
    if (header) out.push(header);
    return out;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const cost = estimateTokens(line) + 1;
    if (size + cost > window && current.length) {
      pieces.push(current.join("\n"));
      current = [...context(i), "…"];
      size = estimateTokens(current.join("\n"));
    }
    current.push(line);
    size += cost;
  }
  if (current.length) pieces.push(current.join("\n"));
  return pieces;
}

/** Joins answers read from several windows: lists are concatenated, other fields keep the first value. */
function merge(values: unknown[]): unknown {
  const present = values.filter((v) => v !== undefined && v !== null);
  if (present.length === 0) return values[0];
  if (present.every(Array.isArray)) return (present as unknown[][]).flat();
  if (present.every((v) => typeof v === "object" && !Array.isArray(v))) {
    const keys = new Set(present.flatMap((v) => Object.keys(v as object)));
    const out: Record<string, unknown> = {};
    for (const key of keys) out[key] = merge(present.map((v) => (v as Record<string, unknown>)[key]));
    return out;
  }
  return present.find((v) => v !== "") ?? present[0];
}

export async function extract(ctx: OperationContext, params: ExtractParams): Promise<unknown> {
  const window = params.window ?? DEFAULT_TOKEN_BUDGET;
  const base = toResponseSchema(params.schema ?? textAnswer);
  const snapshot = await takeSnapshot(ctx.page, {
    selector: params.selector,
    ignoreSelectors: params.ignoreSelectors,
    tokenBudget: false,
    domSettleTimeout: ctx.domSettleTimeout,
    deadline: ctx.deadline,
  });
  ctx.deadline.check();

  let schema = base;
  if (findUrlFields(base.jsonSchema).length > 0) {
    const urls = await snapshot.urls();
    schema = withUrlFieldsAsIds(base, (id) => urls.get(Number(id)));
  }

  let image: LLMContentPart | undefined;
  if (params.screenshot) {
    // A model that cannot take images is refused by the caller before any request is made.
    const png = await ctx.page.screenshot({ type: "png" });
    image = { type: "image", image: new Uint8Array(png), mediaType: "image/png" };
  }

  let pieces: string[];
  if (snapshot.estimatedTokens <= window) pieces = [snapshot.text];
  else if (collectsList(base.jsonSchema)) pieces = splitOutline(snapshot.text, window);
  else pieces = [fitToBudget(snapshot.text, window, params.instruction)];
  if (pieces.length > 1)
    ctx.log.info("extract", `the outline is read in ${pieces.length} windows of up to ${window} tokens`);

  const answers = await Promise.all(
    pieces.map(async (piece, i) => {
      const text = userMessage([
        `Instruction: ${params.instruction}`,
        pieces.length > 1
          ? `This is part ${i + 1} of ${pieces.length} of the page; answer from this part only.`
          : undefined,
        `Page outline:\n${ctx.redactor.mask(piece)}`,
      ]);
      const content: string | LLMContentPart[] = image && i === 0 ? [{ type: "text", text }, image] : text;
      const messages: LLMMessage[] = [
        { role: "system", content: EXTRACT_SYSTEM },
        { role: "user", content },
      ];
      const { data } = await ctx.caller.call({
        operation: "extract",
        model: ctx.model,
        signal: ctx.deadline.signal,
        schema,
        messages,
      });
      return data;
    }),
  );
  ctx.deadline.check();
  // A variable's value the page shows (in a URL field, say) is returned as its %name%.
  return ctx.redactor.maskValue(answers.length === 1 ? answers[0] : merge(answers));
}
