// observe: which elements match an instruction, as Actions that act() accepts as they are.

import { z } from "zod";
import type { ElementRef, Snapshot } from "../snapshot/snapshot.ts";
import { takeSnapshot } from "../snapshot/snapshot.ts";
import type { Action, Variables } from "../types.ts";
import type { OperationContext } from "./context.ts";
import { worthLookingAgain } from "./look-again.ts";
import { defaultMethodFor, knownMethod } from "./methods.ts";
import { idsNotInOutline, methodFromModel } from "./model-words.ts";
import { OBSERVE_SYSTEM, userMessage } from "./prompts.ts";
import { describeVariables } from "./variables.ts";

export const observeAnswer = z.object({
  elements: z
    .array(
      z.object({
        elementId: z.number().int(),
        description: z.string(),
        method: z.string().optional(),
        arguments: z.array(z.string()).optional(),
      }),
    )
    .describe("Matching elements, most relevant first; empty when none matches."),
});

export interface ObserveParams {
  instruction?: string;
  variables?: Variables;
  selector?: string;
  ignoreSelectors?: string[];
  /** Count the model call under this operation's metrics (act's self-heal asks through observe). */
  metricsAs?: "act";
}

const NODE_ID_LIMIT = 25;

/** Turns element refs into Actions (and remembers what each points at). */
export async function toActions(
  ctx: OperationContext,
  snapshot: Snapshot,
  picks: { id: number; description: string; method?: string; arguments?: string[] }[],
): Promise<Action[]> {
  const valid = picks.filter((p) => snapshot.has(p.id));
  // Node ids cost two round trips each: worth it for a model's few picks, not for a whole page's
  // listing (role and name are remembered either way, and act(action) checks those too). They
  // are asked for alongside the descriptions.
  const [refs, nodes] = await Promise.all([
    snapshot.elements(valid.map((p) => p.id)),
    valid.length <= NODE_ID_LIMIT
      ? Promise.all(valid.map((p) => snapshot.backendNodeId(p.id).catch(() => undefined)))
      : Promise.resolve([] as (number | undefined)[]),
  ]);
  const actions: Action[] = [];
  valid.forEach((pick, i) => {
    const ref = refs[i]!;
    const action: Action = {
      selector: ref.xpath,
      description: ctx.redactor.mask(pick.description || describeRef(ref)),
      method: knownMethod(pick.method) ?? defaultMethodFor(ref.role),
      arguments: pick.arguments ?? [],
    };
    ctx.observed.remember(action, {
      backendNodeId: nodes[i],
      role: ref.role,
      name: ref.name,
      url: snapshot.url,
    });
    actions.push(action);
  });
  return actions;
}

function describeRef(ref: ElementRef): string {
  const role = ref.role === "generic" ? "clickable element" : ref.role;
  return ref.name ? `${role}: ${ref.name}` : role;
}

export async function observe(ctx: OperationContext, params: ObserveParams): Promise<Action[]> {
  const read = () =>
    takeSnapshot(ctx.page, {
      selector: params.selector,
      ignoreSelectors: params.ignoreSelectors,
      instruction: params.instruction,
      domSettleTimeout: ctx.domSettleTimeout,
      deadline: ctx.deadline,
    });
  const snapshot = await read();
  ctx.deadline.check();

  // No instruction: every interactive element, straight from the outline, no model.
  if (!params.instruction) {
    const ids = snapshot.ids();
    const refs = await snapshot.elements(ids);
    const picks = refs
      .filter(
        (r) =>
          r.role !== "heading" &&
          r.role !== "image" &&
          r.role !== "Iframe" &&
          !(r.role === "generic" && !r.name),
      )
      .map((r) => ({ id: r.id, description: describeRef(r) }));
    return toActions(ctx, snapshot, picks);
  }

  const instruction = params.instruction;
  const found = await ask(ctx, params, instruction, snapshot);
  // Nothing fits on a young or changing page: it may yet show it; one more look before answering [].
  if (found.length === 0 && (await worthLookingAgain(ctx, snapshot))) {
    ctx.log.info("observe", "nothing fits yet; the page is young or changed, so it is read once more");
    const again = await read();
    ctx.deadline.check();
    return ask(ctx, params, instruction, again);
  }
  return found;
}

/** Asks the model which elements of `snapshot` match, as Actions. */
async function ask(
  ctx: OperationContext,
  params: ObserveParams,
  instruction: string,
  snapshot: Snapshot,
): Promise<Action[]> {
  const outline = ctx.redactor.mask(snapshot.text);
  const { data } = await ctx.caller.call({
    operation: "observe",
    ...(params.metricsAs ? { metricsAs: params.metricsAs } : {}),
    model: ctx.model,
    signal: ctx.deadline.signal,
    schema: observeAnswer,
    // An id that is not in the outline is never taken for a nearby one: the model is asked again,
    // and what it still names wrongly is left out.
    accept: (answer) => {
      const missing = answer.elements.map((e) => e.elementId).filter((id) => !snapshot.has(id));
      return missing.length
        ? `${idsNotInOutline(missing, outline)}; use only ids that the outline shows in [brackets]`
        : undefined;
    },
    messages: [
      { role: "system", content: OBSERVE_SYSTEM },
      {
        role: "user",
        content: userMessage([
          `Instruction: ${instruction}`,
          describeVariables(params.variables),
          `Page outline:\n${outline}`,
        ]),
      },
    ],
  });
  ctx.deadline.check();
  const seen = new Set<number>();
  const picks = data.elements
    .filter((e) => (seen.has(e.elementId) ? false : seen.add(e.elementId)))
    .map((e) => ({
      id: e.elementId,
      description: e.description,
      method: methodFromModel(e.method),
      arguments: e.arguments,
    }));
  return toActions(ctx, snapshot, picks);
}
