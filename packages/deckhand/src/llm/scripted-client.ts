// A model for tests: an LLMClient whose answers a test scripts, so that an automation built on
// Deckhand can be unit-tested against real pages without a provider, a key or a network. Pass it
// as `llmClient`; every act, observe and extract question goes to it, in the shapes below.
//
//   const model = new ScriptedLLMClient()
//     .onAct((q) => ({ elementId: q.idOf("button: Sign in"), method: "click", arguments: [],
//                      description: "click Sign in", completed: true }))
//     .onExtract({ price: "$24.00" });
//   const dh = new Deckhand({ env: "LOCAL", llmClient: model });

import type { LLMClient, LLMMessage, LLMRequest, LLMResponse } from "./client.ts";

/** The answer to one act question: one step of the instruction. */
export interface ScriptedActAnswer {
  /** The id of the element in the outline ([12] -> 12), or -1 when nothing fits (or for a key press on the page). */
  elementId: number;
  /** click, doubleClick, hover, fill, type, press, selectOption, check, uncheck, scrollIntoView, scrollByPage, dragAndDrop. */
  method: string;
  /** fill/type: the text; press: the key; selectOption: the option; [] when none. */
  arguments: string[];
  /** What this step does, e.g. "click the Sign in button". */
  description: string;
  /** Whether this step finishes the instruction (false: Deckhand asks again for the next step). */
  completed: boolean;
}

/** The answer to an observe question: matching elements, most relevant first ([] when none). */
export interface ScriptedObserveAnswer {
  elements: { elementId: number; description: string; method?: string; arguments?: string[] }[];
}

/**
 * The answer to an extract question: an object of the caller's schema, or, for extract with an
 * instruction and no schema, `{ extraction: "text" }`.
 */
export type ScriptedExtractAnswer = Record<string, unknown>;

/** One question as the scripted model received it. */
export interface ScriptedQuestion {
  operation: LLMRequest["operation"];
  /** The instruction of the act, observe or extract call ("" when there is none). */
  instruction: string;
  /** The page outline the question carries (what a model would read). */
  outline: string;
  messages: LLMMessage[];
  /** The JSON Schema the answer must fit. */
  schema: Record<string, unknown> | undefined;
  /**
   * The id of the first outline line that matches, e.g. idOf("button: Sign in") or
   * idOf(/link: Docs/). Throws, quoting the outline, when there is none.
   */
  idOf(line: string | RegExp): number;
}

type Answer<T> = T | ((question: ScriptedQuestion) => T | Promise<T>);

interface Rule {
  operation: LLMRequest["operation"];
  answer: Answer<unknown>;
  /** Answers left; undefined for every question. */
  times: number | undefined;
}

function textOf(message: LLMMessage): string {
  return typeof message.content === "string"
    ? message.content
    : message.content.map((p) => (p.type === "text" ? p.text : "")).join("\n");
}

export class ScriptedLLMClient implements LLMClient {
  readonly modelName: string;
  readonly supportsVision = true;
  /** Every question received, in order. */
  readonly questions: ScriptedQuestion[] = [];
  private readonly rules: Rule[] = [];

  constructor(modelName = "scripted/model") {
    this.modelName = modelName;
  }

  /** Answers act questions (`times` of them, or all). Rules are used in the order they were added. */
  onAct(answer: Answer<ScriptedActAnswer>, times?: number): this {
    return this.add("act", answer, times);
  }

  onObserve(answer: Answer<ScriptedObserveAnswer>, times?: number): this {
    return this.add("observe", answer, times);
  }

  onExtract(answer: Answer<ScriptedExtractAnswer>, times?: number): this {
    return this.add("extract", answer, times);
  }

  private add(operation: LLMRequest["operation"], answer: Answer<unknown>, times: number | undefined): this {
    this.rules.push({ operation, answer, times });
    return this;
  }

  async generate<T = unknown>(request: LLMRequest): Promise<LLMResponse<T>> {
    const all = request.messages.map(textOf).join("\n");
    const instruction = /^Instruction: (.*)$/m.exec(all)?.[1] ?? "";
    const outline = /Page outline:\n([\s\S]*)$/.exec(all)?.[1] ?? "";
    const question: ScriptedQuestion = {
      operation: request.operation,
      instruction,
      outline,
      messages: request.messages,
      schema: request.schema,
      idOf(line) {
        const source = typeof line === "string" ? line.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : line.source;
        const found = new RegExp(`\\[(\\d+)\\] ${source}`).exec(outline);
        if (!found) throw new Error(`ScriptedLLMClient: no line ${String(line)} in the outline:\n${outline}`);
        return Number(found[1]);
      },
    };
    this.questions.push(question);
    const rule = this.rules.find((r) => r.operation === request.operation && r.times !== 0);
    if (!rule) {
      throw new Error(
        `ScriptedLLMClient: no answer scripted for ${request.operation}${instruction ? ` "${instruction}"` : ""}. Add one with on${request.operation[0]!.toUpperCase()}${request.operation.slice(1)}().`,
      );
    }
    if (rule.times !== undefined) rule.times--;
    const data =
      typeof rule.answer === "function"
        ? await (rule.answer as (q: ScriptedQuestion) => unknown)(question)
        : rule.answer;
    return {
      data: data as T,
      usage: {
        promptTokens: Math.ceil(all.length / 4),
        completionTokens: Math.ceil(JSON.stringify(data).length / 4),
      },
    };
  }
}
