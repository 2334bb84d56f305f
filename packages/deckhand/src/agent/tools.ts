// The tools the agent's model gets in DOM and hybrid mode. Every tool call is an operation of its
// own: a Deadline with the tool's time (`toolTimeout`), ended by the run's, goes down to whatever
// the tool does (act's clicks and typing, navigation, the outline read), so a tool that takes longer
// stops what it was doing and answers the model with an error instead of hanging the run, and that
// error ends with the call's log (what was waited for and retried). What a tool did is recorded as
// an AgentAction (variable values never: the model writes %name%, and the values are put in by act
// just before typing).

import { jsonSchema, type Tool, tool } from "ai";
import { z } from "zod";
import type { Page } from "../browser/page.ts";
import { callLogText, Deadline } from "../deadline.ts";
import type { ResponseSchema } from "../llm/schema.ts";
import { substitute } from "../ops/variables.ts";
import { takeSnapshot } from "../snapshot/snapshot.ts";
import {
  type Action,
  type ModelConfiguration,
  RECORDED,
  type RecordedOperation,
  type Variables,
} from "../types.ts";
import { agentPageUrl } from "./agent-url.ts";
import { type ElementIdentity, identityAt } from "./facts.ts";
import type { LoopDetector } from "./stuck.ts";
import type { AgentAction, AgentHost, AgentMode } from "./types.ts";

/** Outline budget of the ariaTree tool (tokens). */
export const ARIA_TREE_TOKEN_BUDGET = 12_000;

/** What done said. */
export interface DoneClaim {
  reasoning: string;
  taskComplete: boolean;
  output?: unknown;
}

/** The state of one run the tools share with the loop. */
export interface RunState {
  actions: AgentAction[];
  done: DoneClaim | undefined;
  /** Set when the loop detector stops the run. */
  stuck: string | undefined;
  /** The last action that changed (or tried to change) the page, and whether it worked. */
  lastEffect: { type: string; success: boolean; message: string } | undefined;
  screenshots: number;
  /** Screenshots (base64 PNG) by the tool call that took them, oldest first. */
  images: Map<string, string>;
}

/** A run's state before its first step. */
export function newRunState(): RunState {
  return {
    actions: [],
    done: undefined,
    stuck: undefined,
    lastEffect: undefined,
    screenshots: 0,
    images: new Map(),
  };
}

export interface ToolContext {
  host: AgentHost;
  page: Page;
  mode: AgentMode;
  variables: Variables | undefined;
  executionModel: ModelConfiguration | undefined;
  toolTimeout: number;
  /** The run's deadline: each tool call's ends with it. */
  deadline: Deadline;
  output: ResponseSchema<unknown> | undefined;
  loop: LoopDetector;
  state: RunState;
}

/** Tools that do not change the page. */
const READS = new Set(["ariaTree", "screenshot", "think", "extract", "wait", "done"]);

/** A cheap fingerprint of what the page shows (URL, text, element count), for loop detection. */
export async function pageState(page: Page): Promise<string> {
  try {
    return await page.evaluate(() => {
      // The text, and what the fields hold (a value is only hashed here, never sent out).
      let text = document.body ? document.body.innerText : "";
      for (const field of document.querySelectorAll("input, textarea, select")) {
        const f = field as HTMLInputElement;
        text += `\u0000${f.value}${f.checked ? "\u0001" : ""}`;
      }
      let hash = 0;
      for (let i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) | 0;
      return `${location.href}#${text.length}:${hash}:${document.getElementsByTagName("*").length}`;
    });
  } catch {
    return `${page.url()}#unreadable`;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs `work` under the tool call's deadline (toolTimeout, within the run's); records the step;
 * applies loop detection. Exported for its test.
 */
export async function step<T extends Record<string, unknown>>(
  ctx: ToolContext,
  type: string,
  args: Record<string, unknown>,
  work: (deadline: Deadline) => Promise<T>,
  summarize: (result: T) => unknown = (result) => result,
): Promise<Record<string, unknown>> {
  const started = performance.now();
  // A deadline of its own (not a step of the run's): the call log its failure ends with is this
  // call's, not everything the run waited for before it.
  const deadline = Deadline.start(`the ${type} tool`, {
    timeout: ctx.toolTimeout,
    signal: ctx.deadline.signal,
    mask: (line) => ctx.host.redactor.mask(line),
  });
  // A timeout of the tool tells what it was still waiting for.
  const outOfTime = () => ({
    success: false,
    error: ctx.host.redactor.mask(
      `The ${type} tool did not finish within ${ctx.toolTimeout} ms and was stopped.${callLogText(deadline.callLog.lines())}`,
    ),
  });
  let answer: Record<string, unknown>;
  let success: boolean;
  try {
    let ranOut = false;
    const result = await deadline.run(async (own) => {
      const done = await work(own);
      // A step that retries until its limit (never past the tool's) can see the tool's time end
      // before the tool's own timer has fired (a busy event loop runs timers late) and fail in its
      // own words. The tool's time ran out either way, and the model hears that, whichever of the
      // two noticed first.
      ranOut = done.success === false && own.timeLeft() === 0 && !ctx.deadline.aborted;
      return done;
    });
    success = result.success !== false;
    answer = ranOut ? { ...outOfTime(), performed: result.performed } : result;
  } catch (error) {
    // The run was cancelled: that is the caller's, not the model's, to hear about.
    if (ctx.deadline.aborted) throw ctx.deadline.signal.reason;
    success = false;
    // A failure that explains itself carries the log already (deadline.explain).
    answer = deadline.expired
      ? outOfTime()
      : { success: false, error: ctx.host.redactor.mask(messageOf(error)) };
  }
  const action: AgentAction = {
    type,
    arguments: ctx.host.redactor.maskValue(args),
    result: ctx.host.redactor.maskValue(success ? summarize(answer as T) : answer),
    success,
    pageUrl: ctx.page.isClosed() ? undefined : ctx.page.url(),
    durationMs: Math.round(performance.now() - started),
  };
  if (type === "act" || type === "fillForm") action.playwrightArguments = answer.performed;
  ctx.state.actions.push(action);
  if (!READS.has(type)) {
    ctx.state.lastEffect = {
      type,
      success,
      message: String(answer.message ?? answer.error ?? ""),
    };
    const verdict = ctx.loop.note(type, args, await ctx.deadline.race(pageState(ctx.page)));
    if (verdict === "warn") return { ...answer, performed: undefined, warning: ctx.loop.warning };
    if (verdict === "stop") ctx.state.stuck = ctx.loop.stuckMessage;
  }
  const { performed: _performed, ...forModel } = answer;
  return forModel;
}

export function buildTools(ctx: ToolContext): Record<string, Tool> {
  const { host, page } = ctx;
  const callOptions = (deadline: Deadline) => ({
    page,
    deadline,
    ...(ctx.executionModel !== undefined ? { model: ctx.executionModel } : {}),
  });

  const act = async (action: string, deadline: Deadline) => {
    const urlBefore = page.url();
    const result = await host.act(action, { ...callOptions(deadline), variables: ctx.variables });
    // For replay: what each element was (role, name), while it is still there to ask; not when
    // the act took the page elsewhere, before or while it was asked (what is at the XPath then is
    // another document's).
    let performed: (Action & Partial<ElementIdentity>)[] = result.actions ?? [];
    // The steps as the act recorded them (role and name when it ran, and its locators): the record
    // the replay and the script exports read.
    const recorded = (result as { [RECORDED]?: RecordedOperation })[RECORDED]?.steps;
    if (recorded && recorded.length === performed.length) {
      performed = recorded;
    } else if (result.success && page.url() === urlBefore) {
      const identified = await Promise.all(
        performed.map(async (a) => ({
          ...a,
          ...(await identityAt(page, a.selector, host.redactor, deadline)),
        })),
      );
      if (page.url() === urlBefore) performed = identified;
    }
    return { success: result.success, message: result.message, performed };
  };

  const tools: Record<string, Tool> = {
    act: tool({
      description:
        "Perform one action on one element of the page, described in plain words (click, type into, select, check, hover, press a key on).",
      inputSchema: z.object({
        action: z
          .string()
          .describe('What to do, e.g. "click the Add to cart button"; write %name% for a variable.'),
      }),
      execute: ({ action }) => step(ctx, "act", { action }, (deadline) => act(action, deadline)),
    }),
    ariaTree: tool({
      description: "Read the page: its accessibility outline (roles, names, text), within a size budget.",
      inputSchema: z.object({}),
      execute: () =>
        step(
          ctx,
          "ariaTree",
          {},
          async (deadline) => {
            const snapshot = await takeSnapshot(page, {
              tokenBudget: ARIA_TREE_TOKEN_BUDGET,
              domSettleTimeout: host.domSettleTimeout,
              deadline,
            });
            return { success: true, url: page.url(), outline: host.redactor.mask(snapshot.text) };
          },
          (result) => ({ url: result.url, characters: String(result.outline).length }),
        ),
    }),
    extract: tool({
      description: "Read information from the page and answer a question about it.",
      inputSchema: jsonSchema<{ instruction: string; schema?: Record<string, unknown> }>({
        type: "object",
        properties: {
          instruction: { type: "string", description: "What to read, e.g. 'the order number'." },
          schema: {
            type: "object",
            description: "A JSON Schema for the answer (optional; without one the answer is text).",
          },
        },
        required: ["instruction"],
      }),
      execute: ({ instruction, schema }) =>
        step(ctx, "extract", { instruction }, async (deadline) => {
          const data = await host.extract(instruction, schema, callOptions(deadline));
          return { success: true, data: host.redactor.maskValue(data) };
        }),
    }),
    fillForm: tool({
      description: "Fill several form fields, one action per field, in order.",
      inputSchema: z.object({
        fields: z
          .array(z.object({ action: z.string().describe('e.g. "type %email% into the Email field"') }))
          .min(1),
      }),
      execute: ({ fields }) =>
        step(ctx, "fillForm", { fields }, async (deadline) => {
          const done: { action: string; success: boolean; message: string }[] = [];
          const performed: Action[] = [];
          for (const field of fields) {
            const result = await act(field.action, deadline);
            performed.push(...result.performed);
            done.push({ action: field.action, success: result.success, message: result.message });
            if (!result.success) break;
          }
          const success = done.length === fields.length && done.every((d) => d.success);
          return {
            success,
            fields: done,
            performed,
            message: success ? "All fields filled." : "A field failed.",
          };
        }),
    }),
    goto: tool({
      description: "Open a URL in the page.",
      inputSchema: z.object({ url: z.string().describe("An absolute http(s) URL.") }),
      execute: ({ url }) =>
        step(ctx, "goto", { url }, async (deadline) => {
          const status = await page.goto(agentPageUrl(substitute(url, ctx.variables)), { deadline });
          return { success: status === null || status < 400, status, url: page.url() };
        }),
    }),
    keys: tool({
      description:
        "Press a key or key chord (method press, e.g. Enter, Control+A), or type text (method type).",
      inputSchema: z.object({
        method: z.enum(["press", "type"]),
        value: z.string().describe("The key (press) or the text (type); %name% for a variable."),
        repeat: z.number().int().min(1).max(50).optional().describe("Times to press (press only)."),
      }),
      execute: ({ method, value, repeat }) =>
        step(ctx, "keys", { method, value, ...(repeat ? { repeat } : {}) }, async (deadline) => {
          const text = substitute(value, ctx.variables);
          // No key goes to the page once the tool's time is over.
          if (method === "type") await page.type(text, { signal: deadline.signal });
          else
            for (let i = 0; i < (repeat ?? 1); i++) {
              deadline.check();
              await page.keyPress(text);
            }
          return { success: true, message: method === "type" ? "Typed." : `Pressed ${value}.` };
        }),
    }),
    navback: tool({
      description: "Go back to the previous page.",
      inputSchema: z.object({}),
      execute: () =>
        step(ctx, "navback", {}, async (deadline) => {
          await page.goBack({ deadline });
          return { success: true, url: page.url() };
        }),
    }),
    screenshot: tool({
      description: "See the page: a screenshot of the viewport.",
      inputSchema: z.object({}),
      execute: () =>
        step(
          ctx,
          "screenshot",
          {},
          async () => {
            const png = await page.screenshot();
            ctx.state.screenshots++;
            return { success: true, image: png.toString("base64") };
          },
          () => ({ screenshot: `screenshot-${ctx.state.screenshots}` }),
        ),
      toModelOutput: ({ toolCallId, output }) =>
        screenshotOutput(ctx.state, toolCallId, output as Record<string, unknown>),
    }),
    scroll: tool({
      description: "Scroll the page up or down by a share of the viewport's height.",
      inputSchema: z.object({
        direction: z.enum(["up", "down"]),
        percentage: z.number().min(1).max(200).optional().describe("Of the viewport height; default 80."),
      }),
      execute: ({ direction, percentage }) =>
        step(ctx, "scroll", { direction, percentage: percentage ?? 80 }, async () => {
          const moved = await page.evaluate(
            ({ down, share }: { down: boolean; share: number }) => {
              const before = window.scrollY;
              window.scrollBy(0, ((down ? 1 : -1) * window.innerHeight * share) / 100);
              return window.scrollY !== before;
            },
            { down: direction === "down", share: percentage ?? 80 },
          );
          return {
            success: true,
            moved,
            message: moved ? "Scrolled." : "The page did not move (at its end).",
          };
        }),
    }),
    think: tool({
      description: "Think before acting: write down a plan or what you noticed. Changes nothing.",
      inputSchema: z.object({ reasoning: z.string() }),
      execute: ({ reasoning }) => step(ctx, "think", { reasoning }, async () => ({ success: true })),
    }),
    wait: tool({
      description: "Wait for the page (at most 10 seconds).",
      inputSchema: z.object({ timeMs: z.number().int().min(0).max(10_000) }),
      execute: ({ timeMs }) =>
        step(ctx, "wait", { timeMs }, async (deadline) => {
          // Not deadline.sleep, which ends early and quietly at the tool's time: a wait longer
          // than the tool may take fails like any other tool that does.
          let timer: NodeJS.Timeout | undefined;
          deadline.defer(() => clearTimeout(timer));
          await deadline.race(new Promise<void>((resolve) => (timer = setTimeout(resolve, timeMs))));
          return { success: true };
        }),
    }),
    done: tool({
      description:
        "Finish: taskComplete true when the page shows the task is done, false when it cannot be done; say why." +
        (ctx.output ? " Give the final answer as `output`, in the required shape." : ""),
      inputSchema: jsonSchema<DoneClaim>({
        type: "object",
        properties: {
          reasoning: { type: "string", description: "What shows the task is done (or why it cannot be)." },
          taskComplete: { type: "boolean" },
          ...(ctx.output ? { output: ctx.output.jsonSchema } : {}),
        },
        required: ctx.output ? ["reasoning", "taskComplete", "output"] : ["reasoning", "taskComplete"],
        additionalProperties: false,
      }),
      execute: async (claim: DoneClaim) => {
        if (ctx.output && claim.taskComplete) {
          const checked = await ctx.output.parse(claim.output);
          if (!checked.ok) {
            const where = checked.path ? `at \`${checked.path}\`` : "at the root";
            const answer = {
              success: false,
              error: `output does not match the required schema ${where}: ${checked.reason}. Call done again with a corrected output.`,
            };
            ctx.state.actions.push({
              type: "done",
              arguments: { taskComplete: true },
              result: answer,
              success: false,
            });
            return answer;
          }
          claim = { ...claim, output: checked.value };
        }
        ctx.state.done = claim;
        ctx.state.actions.push({
          type: "done",
          reasoning: host.redactor.mask(claim.reasoning),
          taskCompleted: claim.taskComplete,
          success: true,
          pageUrl: page.url(),
        });
        return { success: true };
      },
    }),
  };
  if (ctx.mode === "hybrid") {
    delete tools.fillForm;
    Object.assign(tools, coordinateTools(ctx));
  }
  return tools;
}

/** Text that says a tool's screenshot follows as an image (the loop attaches it: see run.ts). */
export const SCREENSHOT_ATTACHED = "the screenshot follows as an image";

/**
 * A tool answer with a screenshot: the image is kept aside (state.images) and the model gets it in
 * a message of its own after the tool's answer: every provider reads an image there, while not all
 * of them accept one inside a tool result (OpenAI chat completions does not).
 */
function screenshotOutput(state: RunState, toolCallId: string, output: Record<string, unknown>) {
  const { image, ...rest } = output;
  if (typeof image === "string") state.images.set(toolCallId, image);
  const value = typeof image === "string" ? { ...rest, screenshot: SCREENSHOT_ATTACHED } : rest;
  return { type: "json" as const, value: JSON.parse(JSON.stringify(value)) };
}

/** Hybrid mode: actions at viewport coordinates, each answering with a new screenshot. */
function coordinateTools(ctx: ToolContext): Record<string, Tool> {
  const { page } = ctx;
  const withScreenshot = async (message: string) => {
    const png = await page.screenshot();
    ctx.state.screenshots++;
    return { success: true, message, image: png.toString("base64") };
  };
  const point = z.object({ x: z.number(), y: z.number() });
  const summary = () => ({ screenshot: `screenshot-${ctx.state.screenshots}` });
  const output = ({ toolCallId, output }: { toolCallId: string; output: unknown }) =>
    screenshotOutput(ctx.state, toolCallId, output as Record<string, unknown>);
  return {
    click: tool({
      description: "Click at x/y (viewport pixels of the screenshot). Answers with a new screenshot.",
      inputSchema: point.extend({
        button: z.enum(["left", "right", "middle"]).optional(),
        clickCount: z.number().int().min(1).max(3).optional(),
      }),
      execute: ({ x, y, button, clickCount }) =>
        step(
          ctx,
          "click",
          { x, y, ...(button ? { button } : {}), ...(clickCount ? { clickCount } : {}) },
          async () => {
            await page.click(x, y, { ...(button ? { button } : {}), ...(clickCount ? { clickCount } : {}) });
            return withScreenshot(`Clicked at ${x},${y}.`);
          },
          summary,
        ),
      toModelOutput: output,
    }),
    type: tool({
      description: "Click at x/y, then type text (%name% for a variable). Answers with a new screenshot.",
      inputSchema: point.extend({ text: z.string() }),
      execute: ({ x, y, text }) =>
        step(
          ctx,
          "type",
          { x, y, text },
          async (deadline) => {
            await page.click(x, y);
            await page.type(substitute(text, ctx.variables), { signal: deadline.signal });
            return withScreenshot("Typed.");
          },
          summary,
        ),
      toModelOutput: output,
    }),
    dragAndDrop: tool({
      description: "Drag from one point to another. Answers with a new screenshot.",
      inputSchema: z.object({ fromX: z.number(), fromY: z.number(), toX: z.number(), toY: z.number() }),
      execute: (args) =>
        step(
          ctx,
          "dragAndDrop",
          args,
          async () => {
            await page.dragAndDrop({ x: args.fromX, y: args.fromY }, { x: args.toX, y: args.toY });
            return withScreenshot("Dragged.");
          },
          summary,
        ),
      toModelOutput: output,
    }),
    clickAndHold: tool({
      description: "Press the mouse at x/y and hold it for durationMs. Answers with a new screenshot.",
      inputSchema: point.extend({ durationMs: z.number().int().min(0).max(10_000) }),
      execute: ({ x, y, durationMs }) =>
        step(
          ctx,
          "clickAndHold",
          { x, y, durationMs },
          async () => {
            await page.click(x, y, { delay: durationMs });
            return withScreenshot("Held.");
          },
          summary,
        ),
      toModelOutput: output,
    }),
    scrollAt: tool({
      description:
        "Scroll with the mouse wheel at x/y by deltaY pixels (negative: up). Answers with a new screenshot.",
      inputSchema: point.extend({ deltaY: z.number() }),
      execute: ({ x, y, deltaY }) =>
        step(
          ctx,
          "scrollAt",
          { x, y, deltaY },
          async () => {
            await page.evaluate(
              ({ px, py, dy }: { px: number; py: number; dy: number }) => {
                const target = document.elementFromPoint(px, py);
                let el: Element | null = target;
                while (el && el !== document.documentElement && el.scrollHeight <= el.clientHeight)
                  el = el.parentElement;
                (el && el !== document.documentElement ? el : document.scrollingElement)?.scrollBy(0, dy);
              },
              { px: x, py: y, dy: deltaY },
            );
            return withScreenshot("Scrolled.");
          },
          summary,
        ),
      toModelOutput: output,
    }),
  };
}
