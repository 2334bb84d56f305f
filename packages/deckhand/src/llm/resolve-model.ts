// From a `ModelConfiguration` ("provider/model" or an object) to a loaded AI SDK language model.
// Resolution is synchronous and makes no request, so configuration mistakes surface before any
// HTTP call; the provider package is imported only when a model of that provider is first loaded.

import { extractReasoningMiddleware, type LanguageModel, wrapLanguageModel } from "ai";
import {
  InvalidAISDKModelFormatError,
  MissingLLMConfigurationError,
  ServiceEnvironmentError,
  UnsupportedModelError,
} from "../errors.ts";
import type { ModelConfiguration } from "../types.ts";
import { legacyModelName, legacyModelWarning } from "./legacy-models.ts";
import {
  customCompatibleProvider,
  findProvider,
  type ProviderInfo,
  type ProviderPackage,
  supportedProviderNames,
} from "./providers.ts";
import { toolCallingMiddleware } from "./text-tool-calls.ts";
import { modelSupportsVision } from "./vision.ts";

/** The model used when the caller configures none (and gives no `llmClient`). */
export const DEFAULT_MODEL_NAME = "openai/gpt-4.1-mini";

/** Which OpenAI API serves an `openai/...` model. */
export type OpenAIApi = "responses" | "chat";

/**
 * How an answer's shape is asked for: `json_schema` (the schema as the response format),
 * `json_object` (JSON mode, the schema in the prompt) or `prompt` (no response format at all, the
 * schema in the prompt). A server that answers 400 to one is asked the next way down, and the
 * client remembers it for the rest of the session.
 */
export type StructuredOutputMode = "json_schema" | "json_object" | "prompt";
export const STRUCTURED_OUTPUT_MODES: readonly StructuredOutputMode[] = [
  "json_schema",
  "json_object",
  "prompt",
];

/**
 * How a tool call is asked for in the agent: `native` (the API's tools and tool_choice) or `text`
 * (the tools described in the prompt, the call read from the answer's text).
 */
export type ToolCallMode = "native" | "text";

/** Fields of the model object that Deckhand reads itself; every other field goes to the provider factory. */
const DECKHAND_FIELDS = new Set([
  "modelName",
  "apiKey",
  "baseURL",
  "headers",
  "provider",
  "vision",
  "api",
  "structuredOutputs",
  "toolCalls",
  "providerOptions",
  "maxRetries",
]);

/** A model configuration checked and completed with defaults and environment values. */
export interface ResolvedModel {
  /** `provider/model`, as shown in logs and metrics. */
  modelName: string;
  provider: ProviderInfo;
  /** The model id sent to the provider (may contain slashes). */
  modelId: string;
  apiKey: string | undefined;
  /** `"option"`, or the environment variable the key came from. */
  keySource: string | undefined;
  baseURL: string | undefined;
  headers: Record<string, string> | undefined;
  /** Whether images may be sent (explicit `vision`, else the family table). */
  vision: boolean;
  /** For `openai`: which API to call. Chat Completions when a custom `baseURL` is set, else Responses. */
  api: OpenAIApi | undefined;
  /** How the answer's shape is asked for at first (see StructuredOutputMode). */
  structuredOutputs: StructuredOutputMode;
  /** Whether the schema also goes into the prompt in `json_schema` mode: local servers may ignore the response format. */
  schemaInPrompt: boolean;
  /** How the agent asks for tool calls at first (see ToolCallMode). */
  toolCalls: ToolCallMode;
  /** Per-call provider options for the AI SDK (`providerOptions` of the model object). */
  providerOptions: Record<string, Record<string, unknown>> | undefined;
  /** Transport retries per call (the AI SDK's `maxRetries`). */
  maxRetries: number | undefined;
  /** Further options for the provider factory (organization, project, ...). */
  settings: Record<string, unknown>;
}

type Env = Record<string, string | undefined>;

function optionError(field: string, problem: string): ServiceEnvironmentError {
  return new ServiceEnvironmentError(`model.${field}`, problem);
}

/**
 * The provider and the model id of a `"provider/model"` name (the id may contain slashes);
 * InvalidAISDKModelFormatError when it is not of that form.
 */
export function parseModelName(modelName: string): { provider: string; modelId: string } {
  const slash = modelName.indexOf("/");
  const provider = slash > 0 ? modelName.slice(0, slash).trim() : "";
  const modelId = slash > 0 ? modelName.slice(slash + 1).trim() : "";
  if (!provider || !modelId || /\s/.test(provider)) throw new InvalidAISDKModelFormatError(modelName);
  return { provider, modelId };
}

function readString(config: Record<string, unknown>, field: string): string | undefined {
  const value = config[field];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw optionError(field, `must be a string, got ${typeof value}`);
  return value;
}

function readBoolean(config: Record<string, unknown>, field: string): boolean | undefined {
  const value = config[field];
  if (value === undefined) return undefined;
  if (typeof value !== "boolean") throw optionError(field, "must be true or false");
  return value;
}

function readStructuredMode(config: Record<string, unknown>): StructuredOutputMode | undefined {
  const value = config.structuredOutputs;
  if (value === undefined) return undefined;
  if (value === true) return "json_schema";
  if (value === false) return "json_object";
  if (typeof value === "string" && (STRUCTURED_OUTPUT_MODES as readonly string[]).includes(value))
    return value as StructuredOutputMode;
  throw optionError(
    "structuredOutputs",
    'must be "json_schema", "json_object" or "prompt" (true is "json_schema", false is "json_object")',
  );
}

function readToolCallMode(config: Record<string, unknown>): ToolCallMode | undefined {
  const value = config.toolCalls;
  if (value === undefined) return undefined;
  if (value === "native" || value === "text") return value;
  throw optionError(
    "toolCalls",
    'must be "native" (the API\'s tool calls) or "text" (tool calls written in the answer)',
  );
}

function readObject<T>(config: Record<string, unknown>, field: string): T | undefined {
  const value = config[field];
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw optionError(field, "must be an object");
  return value as T;
}

function missingKeyError(
  modelName: string,
  provider: ProviderInfo,
  isDefault: boolean,
): MissingLLMConfigurationError {
  const env = provider.keyEnv[0] ?? "the provider's API key variable";
  const alternatives = provider.keyEnv.length > 1 ? ` (or ${provider.keyEnv.slice(1).join(", ")})` : "";
  const keyEnv = provider.keyEnv.join(", ");
  if (isDefault) {
    return new MissingLLMConfigurationError(
      `No model is configured, and the default model ${modelName} needs an API key.`,
      {
        howToFix:
          `Set the environment variable ${env}${alternatives}, or pass \`model\` (for example ` +
          `"anthropic/claude-sonnet-4-5", or { modelName: "${modelName}", apiKey: "..." }), or pass an \`llmClient\`.`,
        missing: "key",
        keyEnv,
      },
    );
  }
  return new MissingLLMConfigurationError(`No API key for ${modelName}.`, {
    howToFix:
      `Set the environment variable ${env}${alternatives}, or pass it in the model object: ` +
      `{ modelName: "${modelName}", apiKey: "..." }. Or pass an \`llmClient\`.`,
    missing: "key",
    keyEnv,
  });
}

/**
 * Checks a model configuration and completes it from the environment. Throws
 * `InvalidAISDKModelFormatError` (not provider/model), `UnsupportedModelError` (unknown provider
 * without a baseURL), or `MissingLLMConfigurationError` (no key where one is needed, no address
 * for vLLM). `undefined` means the default model.
 */
export function resolveModel(
  config: ModelConfiguration | undefined,
  env: Env = process.env,
  warn?: (message: string) => void,
): ResolvedModel {
  const isDefault = config === undefined;
  const object: Record<string, unknown> =
    config === undefined
      ? { modelName: DEFAULT_MODEL_NAME }
      : typeof config === "string"
        ? { modelName: config }
        : config;
  if (typeof object !== "object" || object === null) {
    throw new ServiceEnvironmentError(
      "model",
      'must be a "provider/model" string or an object with `modelName`',
    );
  }
  const rawName = object.modelName;
  if (typeof rawName !== "string" || rawName.trim() === "") {
    throw optionError("modelName", 'is required: a "provider/model" string such as "openai/gpt-4.1-mini"');
  }

  const explicitProvider = readString(object, "provider");
  let providerName: string;
  let modelId: string;
  if (explicitProvider) {
    providerName = explicitProvider;
    const prefix = `${explicitProvider}/`;
    modelId = rawName.startsWith(prefix) ? rawName.slice(prefix.length) : rawName;
  } else {
    const legacy = legacyModelName(rawName);
    if (legacy) warn?.(legacyModelWarning(rawName.trim(), legacy));
    ({ provider: providerName, modelId } = parseModelName(legacy ?? rawName.trim()));
  }

  const optionBaseURL = readString(object, "baseURL");
  const known = findProvider(providerName);
  if (!known && !optionBaseURL) {
    throw new UnsupportedModelError(
      `Unknown model provider "${providerName}" in "${rawName}". Supported providers: ${supportedProviderNames()}. ` +
        "Any other OpenAI-compatible server works too: give its `baseURL` in the model object.",
    );
  }
  const provider = known ?? customCompatibleProvider(providerName);
  const modelName = `${provider.name}/${modelId}`;

  const baseURL =
    optionBaseURL ??
    (provider.baseURLEnv ? env[provider.baseURLEnv] || undefined : undefined) ??
    provider.defaultBaseURL;
  if (provider.package === "@ai-sdk/openai-compatible" && !baseURL) {
    throw new MissingLLMConfigurationError(
      `${modelName} needs the address of your ${provider.name} server.`,
      {
        howToFix:
          `Set \`baseURL\` in the model object (for example { modelName: "${modelName}", baseURL: ` +
          `"http://127.0.0.1:8000/v1" })` +
          (provider.baseURLEnv ? ` or the ${provider.baseURLEnv} environment variable.` : "."),
        missing: "baseURL",
      },
    );
  }

  let apiKey = readString(object, "apiKey");
  let keySource: string | undefined = apiKey ? "option" : undefined;
  if (!apiKey) {
    for (const name of provider.keyEnv) {
      const value = env[name];
      if (value) {
        apiKey = value;
        keySource = name;
        break;
      }
    }
  }
  if (!apiKey && provider.needsKey) throw missingKeyError(modelName, provider, isDefault);

  const api = readString(object, "api");
  if (api !== undefined && api !== "responses" && api !== "chat")
    throw optionError("api", 'must be "responses" or "chat"');
  if (api !== undefined && provider.name !== "openai") {
    throw optionError("api", `only applies to openai models, not ${provider.name}`);
  }

  const maxRetries = object.maxRetries;
  if (
    maxRetries !== undefined &&
    (typeof maxRetries !== "number" || !Number.isInteger(maxRetries) || maxRetries < 0)
  ) {
    throw optionError("maxRetries", "must be a whole number of retries, 0 or more");
  }

  const settings: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    if (!DECKHAND_FIELDS.has(key) && value !== undefined) settings[key] = value;
  }

  return {
    modelName,
    provider,
    modelId,
    apiKey,
    keySource,
    baseURL,
    headers: readObject<Record<string, string>>(object, "headers"),
    vision: modelSupportsVision(modelId, readBoolean(object, "vision")),
    api:
      provider.name === "openai"
        ? ((api as OpenAIApi | undefined) ?? (baseURL ? "chat" : "responses"))
        : undefined,
    structuredOutputs: readStructuredMode(object) ?? provider.structuredOutputs,
    schemaInPrompt: provider.localServer === true || !known,
    toolCalls: readToolCallMode(object) ?? "native",
    providerOptions: readObject<Record<string, Record<string, unknown>>>(object, "providerOptions"),
    maxRetries: maxRetries as number | undefined,
    settings,
  };
}

/**
 * Chat Completions on a server that may be a local one. Reasoning models there (Qwen3, DeepSeek-R1
 * distills, ...) write their reasoning into the content in a `<think>` block: it is taken out as
 * reasoning, never read as the answer. Tool calling is made to work with what the server supports
 * (text-tool-calls.ts).
 */
function forLocalServers(
  chat: Exclude<LanguageModel, string>,
  model: ResolvedModel,
  log: ((message: string) => void) | undefined,
): LanguageModel {
  return wrapLanguageModel({
    model: chat as Parameters<typeof wrapLanguageModel>[0]["model"],
    middleware: [
      toolCallingMiddleware(model.toolCalls, (message) => log?.(`${model.modelName}: ${message}`)),
      extractReasoningMiddleware({ tagName: "think" }),
    ],
  });
}

const loaded = new Set<ProviderPackage>();

/** Provider packages imported so far in this process (they load on first use only). */
export function loadedProviderPackages(): ReadonlySet<ProviderPackage> {
  return loaded;
}

/**
 * Imports the provider package (first time only) and creates the language model. `log` hears about
 * the ways of tool calling the server made it change (text-tool-calls.ts).
 */
export async function loadLanguageModel(
  model: ResolvedModel,
  log?: (message: string) => void,
): Promise<LanguageModel> {
  const { provider, modelId, apiKey, baseURL, headers, settings } = model;
  const common = {
    ...settings,
    ...(apiKey ? { apiKey } : {}),
    ...(baseURL ? { baseURL } : {}),
    ...(headers ? { headers } : {}),
  };
  switch (provider.package) {
    case "@ai-sdk/openai": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      loaded.add(provider.package);
      const openai = createOpenAI(common);
      if (model.api !== "chat") return openai.responses(modelId);
      // Chat Completions at another address is often a local server behind the OpenAI provider.
      return baseURL ? forLocalServers(openai.chat(modelId), model, log) : openai.chat(modelId);
    }
    case "@ai-sdk/anthropic": {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      loaded.add(provider.package);
      return createAnthropic(common)(modelId);
    }
    case "@ai-sdk/google": {
      const { createGoogle } = await import("@ai-sdk/google");
      loaded.add(provider.package);
      return createGoogle(common)(modelId);
    }
    case "@ai-sdk/openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      loaded.add(provider.package);
      const compatibleProvider = createOpenAICompatible({
        ...common,
        name: provider.name,
        baseURL: baseURL ?? "",
        includeUsage: true,
        // Which response format is sent is the client's choice, call by call (StructuredOutputMode).
        supportsStructuredOutputs: true,
      });
      return forLocalServers(compatibleProvider.chatModel(modelId), model, log);
    }
  }
}
