// What every operation of a session does around its own work: wait for its turn, find the page it
// targets, pass the session's log lines to the client (secrets removed), measure its token usage,
// and append it to the session's replay record, success or not.

import { type Deckhand, type DeckhandMetrics, type LogLine, type Page, ServiceError } from "deckhand";
import type { FastifyBaseLogger } from "fastify";
import { toPublicError } from "../error-handler.ts";
import { ApiError } from "../errors.ts";
import type { ServiceMetrics } from "../metrics.ts";
import type { OperationContext } from "../routes/handlers.ts";
import { type SecretSet, secretsOf } from "../secrets.ts";
import type { LiveSession } from "../sessions/live-session.ts";
import type { ModelEgress } from "../sessions/model-config.ts";
import { usageBetween } from "../sessions/pricing.ts";
import type { Store } from "../store/store.ts";
import type { StepScreenshots } from "../viewer/step-screenshots.ts";
import { targetPage } from "./target-page.ts";

/** How recent the previous step's screenshot must be to serve as the next act's "before". */
const REUSE_BEFORE_MS = 2000;

export interface OperationDeps {
  store: Store;
  log: FastifyBaseLogger;
  /** Milliseconds an operation may take when neither the call nor the session gives a timeout. */
  operationTimeoutMs: number;
  /** Where a call's model baseURL may lead. */
  modelEgress: ModelEgress;
  /** The screenshot of every step (none: not taken). */
  screenshots?: StepScreenshots | undefined;
  /** Where each operation's outcome, latency and tokens are counted. */
  metrics?: ServiceMetrics | undefined;
}

/** What the work of an operation gets. */
export interface OperationRun {
  dh: Deckhand;
  page: Page;
  /** Aborts when the client goes away or the session ends. */
  signal: AbortSignal;
  /** A line for the client's stream (and the service's debug log), secrets removed. */
  log(message: string): void;
}

export interface RecordedOperation<R> {
  method: "act" | "extract" | "observe" | "navigate" | "agentExecute";
  /** Values no log line may show: variable values, model keys. */
  secrets: readonly unknown[];
  /**
   * The call's variable values: they may be typed into the page, so they are hidden in its
   * screenshots and live view from now on (LiveSession.pageSecrets), and the live view shows no new
   * frame while this operation runs (LiveSession.holdLiveView).
   */
  pageValues?: readonly unknown[];
  /** The model the operation runs with ("provider/model"), for its cost; none for navigate. */
  modelName?: string;
  /**
   * The model endpoint the caller chose (its baseURL), if any: a failure of the model call then says
   * only that the endpoint could not be used, not what answered there.
   */
  modelEndpoint?: string | undefined;
  /** Count only this group's tokens in the record (the agent: its tools' calls are recorded apart). */
  usageGroup?: "agent";
  run(run: OperationRun): Promise<R>;
  /** The result as the replay records it (spec 2.5: an object). */
  recordAs(result: R): Record<string, unknown>;
}

/** The call's body as the replay records it: what the client sent, minus transport details. */
function recordedParameters(body: unknown): Record<string, unknown> {
  const { streamResponse: _stream, ...parameters } = (body ?? {}) as Record<string, unknown>;
  return parameters;
}

function failureRecord(
  error: unknown,
  signal: AbortSignal,
  requestId: string,
  secrets: SecretSet,
): Record<string, unknown> {
  if (signal.aborted) return { success: false, cancelled: true, error: "The operation was cancelled." };
  const { body } = toPublicError(error, requestId, 0, secrets);
  return { success: false, error: body.error, code: body.code };
}

/** The marker every Vercel AI SDK error carries (what its `AISDKError.isInstance` checks). */
const AI_SDK_ERROR = Symbol.for("vercel.ai.error");

/**
 * A model call to a caller's endpoint that failed on the way there or back (no connection, an
 * error status, an answer that is not a model API's: the library's LLMResponseError caused by the
 * provider's own error): the caller learns only that the endpoint could not be used, never what
 * answered (a status, a banner, "invalid JSON" from something that is not a model); the operator's
 * log keeps the whole error. A model's answer that the operation could not use is the model's, and
 * goes out as it would in LOCAL mode.
 */
function uniformModelFailure(
  error: unknown,
  endpoint: string | undefined,
  deps: OperationDeps,
  sessionId: string,
): unknown {
  if (endpoint === undefined || !(error instanceof ServiceError) || error.code !== "LLM_RESPONSE")
    return error;
  const cause = error.cause as Record<symbol, unknown> | null | undefined;
  if (typeof cause !== "object" || cause === null || cause[AI_SDK_ERROR] !== true) return error;
  deps.log.info({ sessionId, err: error }, "the caller's model endpoint failed");
  return new ApiError(
    502,
    "LLM_RESPONSE",
    `The model endpoint ${endpoint} could not be used: it could not be reached, or did not answer as a model ` +
      "API (options.model.baseURL).",
  );
}

/** A metrics record whose total* fields are one group's (for usageBetween). */
function groupAsTotal(metrics: DeckhandMetrics, group: "agent"): DeckhandMetrics {
  return {
    ...metrics,
    totalPromptTokens: metrics[`${group}PromptTokens`],
    totalCompletionTokens: metrics[`${group}CompletionTokens`],
    totalReasoningTokens: metrics[`${group}ReasoningTokens`],
    totalCachedInputTokens: metrics[`${group}CachedInputTokens`],
    totalInferenceTimeMs: metrics[`${group}InferenceTimeMs`],
  };
}

export async function runRecorded<R>(
  context: OperationContext<unknown>,
  live: LiveSession,
  deps: OperationDeps,
  operation: RecordedOperation<R>,
): Promise<R> {
  // The request's secret values (keys, model options, variable values; see secrets.ts), and the
  // operation's own: removed from its log events and from what the replay keeps.
  const secrets = secretsOf(context.request);
  for (const secret of operation.secrets) secrets.add(secret);
  if (context.modelApiKey) secrets.add(context.modelApiKey);
  const log = (message: string) => context.log(secrets.redact(message));
  // The library's own lines go to a streaming client whole, as its `logger` option gets them.
  const relayLine = (line: LogLine) =>
    context.log({
      category: line.category,
      message: secrets.redact(line.message),
      level: line.level,
      timestamp: line.timestamp,
      ...(line.auxiliary ? { auxiliary: secrets.redactValue(line.auxiliary) } : {}),
    });
  const frameId = (context.body as { frameId?: string | null } | undefined)?.frameId;

  return live.run(context.signal, async (signal, defer) => {
    const { dh } = live;
    const page = targetPage(dh, frameId);
    const shots = deps.screenshots;
    const values = (operation.pageValues ?? []).map(String).filter((value) => value !== "");
    for (const value of values) live.pageSecrets.add(value);
    const hide = [...live.pageSecrets];
    // Before the first key is typed: no frame of the live view shows a value half typed.
    const release = values.length > 0 ? live.holdLiveView() : undefined;
    // An act's "before": the previous step's "after" when nothing can have changed the page since
    // (taken moments ago, of this page at this URL, no CDP client message after it); otherwise a
    // capture asked for now and taken beside the act's snapshot (see step-screenshots.ts).
    const last = live.lastStepShot;
    const unchanged =
      last !== undefined &&
      Date.now() - last.at < REUSE_BEFORE_MS &&
      last.targetId === page.targetId &&
      last.url === page.url() &&
      live.lastClientMessageAt < last.at;
    const before =
      shots && operation.method === "act"
        ? unchanged
          ? Promise.resolve(last.jpeg)
          : shots.capture(page, hide)
        : undefined;
    const timestamp = Date.now();
    const metricsBefore: DeckhandMetrics = await dh.metrics;
    let result: R | undefined;
    let failure: unknown;
    let failed = false;
    try {
      result = await live.relay.during(relayLine, () => operation.run({ dh, page, signal, log }));
    } catch (error) {
      failed = true;
      failure = uniformModelFailure(error, operation.modelEndpoint, deps, live.id);
    } finally {
      release?.();
    }
    const metricsAfter: DeckhandMetrics = await dh.metrics;
    deps.metrics?.operation(
      operation.method,
      !failed ? "success" : signal.aborted ? "cancelled" : "error",
      (Date.now() - timestamp) / 1000,
    );
    const tokenUsage = operation.modelName
      ? operation.usageGroup
        ? usageBetween(
            groupAsTotal(metricsBefore, operation.usageGroup),
            groupAsTotal(metricsAfter, operation.usageGroup),
            operation.modelName,
          )
        : usageBetween(metricsBefore, metricsAfter, operation.modelName)
      : undefined;
    if (tokenUsage) deps.metrics?.modelUsage(tokenUsage);
    const pageUrl = page.isClosed() ? (dh.context.activePage()?.url() ?? "about:blank") : page.url();
    try {
      const seq = await deps.store.appendAction(live.id, {
        method: operation.method,
        parameters: secrets.redactValue(recordedParameters(context.body)),
        result: secrets.redactValue(
          failed
            ? failureRecord(failure, signal, context.request.id, secrets)
            : operation.recordAs(result as R),
        ),
        timestamp,
        endTime: Date.now(),
        pageUrl,
        ...(tokenUsage ? { tokenUsage } : {}),
      });
      if (shots) {
        // After the client has its answer, before the next operation may change the page.
        defer(async () => {
          const shown = page.isClosed() ? dh.context.activePage() : page;
          await shots.keep(live.id, seq, "before", before ? await before : null);
          const after = shown ? await shots.capture(shown, hide) : null;
          await shots.keep(live.id, seq, "after", after);
          live.lastStepShot =
            after && shown
              ? { at: Date.now(), targetId: shown.targetId, url: shown.url(), jpeg: after }
              : undefined;
        });
      }
    } catch (error) {
      // The client's answer does not depend on the record; the operator learns it is missing.
      deps.log.error({ sessionId: live.id, err: error }, "could not record the operation in the replay");
    }
    if (failed) throw failure;
    return result as R;
  });
}
