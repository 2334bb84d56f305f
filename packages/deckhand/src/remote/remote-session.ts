// The REMOTE driver: a session on the Deckhand service. AI operations go over HTTP (streamed, so
// the service's log lines arrive as they happen); the page API goes through the service's CDP
// proxy, so `page.goto`, locators and screenshots work exactly as in LOCAL mode.

import { Browser } from "../browser/browser.ts";
import {
  MissingEnvironmentVariableError,
  ServiceBrowserClosedError,
  ServiceEnvironmentError,
  ServiceInitError,
  ZodSchemaValidationError,
} from "../errors.ts";
import type { ExportScriptOptions } from "../export/script.ts";
import { type SchemaInput, toResponseSchema } from "../llm/schema.ts";
import type { DeckhandLog } from "../log.ts";
import { type MetricsOperation, MetricsRecorder } from "../metrics.ts";
import type { ResolvedOptions } from "../options.ts";
import type {
  Action,
  ActResult,
  DeckhandMetrics,
  ModelConfiguration,
  SessionReplay,
  Variables,
} from "../types.ts";
import { actionOnTheWire } from "../wire.ts";
import { ServiceClient } from "./service-client.ts";

export const DEFAULT_SERVICE_URL = "http://127.0.0.1:3000";
const SDK_VERSION = "0.1.0";

interface StartData {
  sessionId: string;
  cdpUrl?: string;
  available: boolean;
  sessionUrl?: string;
  debugUrl?: string;
}

export interface RemoteCallOptions {
  model?: ModelConfiguration;
  timeout?: number;
  serverCache?: boolean;
  /** Target page: its main frame id (the page's target id). */
  frameId?: string;
  signal?: AbortSignal;
}

/** The model config as the body carries it (no key: that travels in x-model-api-key). */
function splitModel(model: ModelConfiguration | undefined): { model?: ModelConfiguration; key?: string } {
  if (model === undefined || typeof model === "string") return { model };
  const { apiKey, ...rest } = model;
  return { model: rest as ModelConfiguration, key: apiKey };
}

export class RemoteSession {
  readonly client: ServiceClient;
  sessionId: string | undefined;
  sessionUrl: string | undefined;
  debugUrl: string | undefined;
  private readonly options: ResolvedOptions;
  private readonly log: DeckhandLog;

  constructor(options: ResolvedOptions, log: DeckhandLog) {
    this.options = options;
    this.log = log;
    if (options.llmClient) {
      throw new ServiceEnvironmentError(
        "llmClient",
        'is not available with env "REMOTE": the service calls the model, and an object with code cannot ' +
          "travel to it. Pass `model` instead (its apiKey is sent with each request, never stored).",
      );
    }
    if (options.actionCache) {
      throw new ServiceEnvironmentError(
        "actionCache",
        'is not available with env "REMOTE": the service keeps its own cache of acts, per project ' +
          "(serverCache). Leave actionCache out, or use it with LOCAL.",
      );
    }
    // Options of the client's own process that the service does for it.
    if (options.cacheDir)
      log.warn("remote", 'cacheDir has no effect with env "REMOTE": the service caches (serverCache).');
    if (options.logInferenceToFile)
      log.warn("remote", 'logInferenceToFile has no effect with env "REMOTE": the service calls the model.');
    const apiKey = options.apiKey ?? process.env.PLATFORM_API_KEY;
    if (!apiKey) {
      throw new MissingEnvironmentVariableError(
        "PLATFORM_API_KEY",
        'env "REMOTE" needs the service\'s API key: pass `apiKey` or set PLATFORM_API_KEY (create one with `deckhand-server keys create`).',
      );
    }
    log.redactor.add(apiKey);
    this.client = new ServiceClient({
      baseUrl: options.apiUrl ?? process.env.PLATFORM_API_URL ?? DEFAULT_SERVICE_URL,
      apiKey,
      log,
      sdkVersion: SDK_VERSION,
    });
  }

  /** Starts a session (or resumes `sessionId`) and connects to its browser through the CDP proxy. */
  async start(): Promise<Browser> {
    const model = splitModel(this.options.model);
    const data = await this.client
      .request<StartData>(
        "POST",
        "/sessions/start",
        {
          ...(typeof model.model === "string" ? { modelName: model.model } : {}),
          ...(typeof model.model === "object" ? { modelName: model.model.modelName } : {}),
          domSettleTimeoutMs: this.options.domSettleTimeout,
          verbose: this.options.verbose,
          systemPrompt: this.options.systemPrompt,
          selfHeal: this.options.selfHeal,
          explicitInstructions: this.options.explicitInstructions,
          experimental: this.options.experimental,
          ...(this.options.sessionCreateParams || this.options.keepAlive
            ? {
                sessionCreateParams: {
                  ...this.options.sessionCreateParams,
                  keepAlive: this.options.keepAlive,
                },
              }
            : {}),
          ...(this.options.sessionId ? { sessionId: this.options.sessionId } : {}),
        },
        { modelApiKey: model.key, ...(this.options.sessionId ? { sessionId: this.options.sessionId } : {}) },
      )
      .catch((error: unknown) => {
        // A service that cannot be reached is, for init(), a failure to start.
        if (error instanceof ServiceBrowserClosedError)
          throw new ServiceInitError(error.message, { cause: error });
        throw error;
      });
    this.sessionId = data.sessionId;
    this.sessionUrl = data.sessionUrl;
    this.debugUrl = data.debugUrl;
    const { url, headers } = this.client.websocket(`/sessions/${encodeURIComponent(data.sessionId)}/cdp`);
    try {
      return await Browser.connect(url, { headers });
    } catch (error) {
      if (!this.options.sessionId) await this.end().catch(() => undefined);
      throw error;
    }
  }

  private path(op: string): string {
    return `/sessions/${encodeURIComponent(this.sessionId ?? "")}/${op}`;
  }

  private callParts(options: RemoteCallOptions) {
    const { model, key } = splitModel(options.model ?? this.options.model);
    const serverCache = options.serverCache ?? this.options.serverCache;
    return {
      model,
      request: {
        stream: true,
        signal: options.signal,
        modelApiKey: key,
        bypassCache: !serverCache,
        onLog: (message: string) => this.log.info("remote", message),
      },
    };
  }

  async act(
    input: string | Action,
    variables: Variables | undefined,
    options: RemoteCallOptions,
  ): Promise<ActResult> {
    const { model, request } = this.callParts(options);
    const data = await this.client.request<{ result: ActResult }>(
      "POST",
      this.path("act"),
      {
        input: typeof input === "string" ? input : actionOnTheWire(input),
        options: {
          ...(model ? { model } : {}),
          ...(variables ? { variables } : {}),
          ...(options.timeout ? { timeout: options.timeout } : {}),
        },
        ...(options.frameId ? { frameId: options.frameId } : {}),
      },
      request,
    );
    return data.result;
  }

  async observe(
    instruction: string | undefined,
    params: { variables?: Variables; selector?: string; ignoreSelectors?: string[] },
    options: RemoteCallOptions,
  ): Promise<Action[]> {
    const { model, request } = this.callParts(options);
    const data = await this.client.request<{ result: Action[] }>(
      "POST",
      this.path("observe"),
      {
        ...(instruction ? { instruction } : {}),
        options: {
          ...(model ? { model } : {}),
          ...(params.variables ? { variables: params.variables } : {}),
          ...(options.timeout ? { timeout: options.timeout } : {}),
          ...(params.selector ? { selector: params.selector } : {}),
          ...(params.ignoreSelectors ? { ignoreSelectors: params.ignoreSelectors } : {}),
        },
        ...(options.frameId ? { frameId: options.frameId } : {}),
      },
      request,
    );
    return data.result;
  }

  /** extract in all four forms; a zod schema is sent as JSON Schema and the answer checked here with zod. */
  async extract(
    instruction: string | undefined,
    schema: SchemaInput | undefined,
    params: { selector?: string; ignoreSelectors?: string[]; screenshot?: boolean },
    options: RemoteCallOptions,
  ): Promise<unknown> {
    const { model, request } = this.callParts(options);
    const prepared = schema ? toResponseSchema(schema) : undefined;
    const data = await this.client.request<{ result: unknown; cacheStatus?: "HIT" | "MISS" }>(
      "POST",
      this.path("extract"),
      {
        ...(instruction ? { instruction } : {}),
        ...(prepared ? { schema: prepared.jsonSchema } : {}),
        options: {
          ...(model ? { model } : {}),
          ...(options.timeout ? { timeout: options.timeout } : {}),
          ...(params.selector ? { selector: params.selector } : {}),
          ...(params.ignoreSelectors ? { ignoreSelectors: params.ignoreSelectors } : {}),
          ...(params.screenshot ? { screenshot: true } : {}),
        },
        ...(options.frameId ? { frameId: options.frameId } : {}),
      },
      instruction ? request : { ...request, bypassCache: true },
    );
    // The service sends cacheStatus beside the result; spec 2.9 returns it with the result.
    const { cacheStatus } = data;
    if (!prepared) {
      return cacheStatus !== undefined && isPlainObject(data.result)
        ? { ...data.result, cacheStatus }
        : data.result;
    }
    const checked = await prepared.parse(data.result);
    if (!checked.ok) throw new ZodSchemaValidationError(checked.path, checked.reason, checked.issues);
    return cacheStatus !== undefined &&
      typeof checked.value === "object" &&
      checked.value !== null &&
      !Array.isArray(checked.value)
      ? { ...(checked.value as object), cacheStatus }
      : checked.value;
  }

  /** agentExecute: the run happens on the service; its log lines arrive as it goes. */
  async agentExecute(
    config: {
      model?: ModelConfiguration;
      executionModel?: ModelConfiguration;
      systemPrompt?: string;
      mode?: string;
      cua?: boolean;
    },
    execute: {
      instruction: string;
      maxSteps?: number;
      toolTimeout?: number;
      highlightCursor?: boolean;
      variables?: Variables;
    },
    options: RemoteCallOptions & { shouldCache?: boolean },
  ): Promise<{ result: Record<string, unknown>; cacheEntry?: Record<string, unknown> }> {
    const { model, request } = this.callParts({ ...options, model: config.model ?? options.model });
    const execution = splitModel(config.executionModel);
    if (execution.key && request.modelApiKey && execution.key !== request.modelApiKey)
      throw new ServiceEnvironmentError(
        "executionModel.apiKey",
        "in REMOTE mode the agent's model and its executionModel share one key (x-model-api-key); use the same key or leave executionModel's key out",
      );
    return this.client.request<{ result: Record<string, unknown>; cacheEntry?: Record<string, unknown> }>(
      "POST",
      this.path("agentExecute"),
      {
        agentConfig: {
          ...(model ? { model } : {}),
          ...(execution.model ? { executionModel: execution.model } : {}),
          ...(config.systemPrompt ? { systemPrompt: config.systemPrompt } : {}),
          ...(config.mode ? { mode: config.mode } : {}),
          ...(config.cua !== undefined ? { cua: config.cua } : {}),
        },
        executeOptions: execute,
        ...(options.frameId ? { frameId: options.frameId } : {}),
        ...(options.shouldCache ? { shouldCache: true } : {}),
      },
      { ...request, modelApiKey: request.modelApiKey ?? execution.key },
    );
  }

  /** Metrics of the session, from the service's replay record (section 2.12). */
  async metrics(): Promise<DeckhandMetrics> {
    const recorder = new MetricsRecorder();
    if (!this.sessionId) return recorder.snapshot();
    const replay = await this.client.request<SessionReplay>("GET", this.path("replay"));
    for (const page of replay.pages) {
      for (const action of page.actions) {
        const op = (action.method === "agentExecute" ? "agent" : action.method) as MetricsOperation;
        if (!["act", "extract", "observe", "agent"].includes(op) || !action.tokenUsage) continue;
        recorder.add(op, {
          promptTokens: action.tokenUsage.inputTokens ?? 0,
          completionTokens: action.tokenUsage.outputTokens ?? 0,
          inferenceTimeMs: action.tokenUsage.timeMs ?? 0,
        });
      }
    }
    return recorder.snapshot();
  }

  /** The session's script, as the service exports its replay record (GET /sessions/{id}/script). */
  async exportScript(options: ExportScriptOptions): Promise<string> {
    const query = new URLSearchParams({ format: options.format ?? "playwright-test" });
    if (options.assertExtracts) query.set("assertExtracts", "true");
    return this.client.request<string>("GET", `${this.path("script")}?${query}`);
  }

  /** Ends the session on the service (its browser context is released there). */
  async end(): Promise<void> {
    if (!this.sessionId) return;
    await this.client.request("POST", this.path("end"));
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
