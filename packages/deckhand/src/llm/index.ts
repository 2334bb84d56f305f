// The model layer: configuration -> provider client -> validated answers, with usage accounting.
// Knows nothing of browsers or pages.

export {
  AISdkClient,
  type AISdkClientOptions,
  LLMUnusableAnswerError,
  toLLMUsage,
  toModelMessages,
} from "./ai-sdk-client.ts";
export {
  type ModelCall,
  ModelCaller,
  type ModelCallerOptions,
  type ModelCallResult,
  type ModelOperation,
  withSystemPrompt,
} from "./caller.ts";
export type {
  JSONSchema,
  LLMClient,
  LLMContentPart,
  LLMMessage,
  LLMRequest,
  LLMResponse,
  LLMUsage,
} from "./client.ts";
export { DEFAULT_INFERENCE_LOG_DIR, InferenceFileLog, type InferenceRecord } from "./inference-log.ts";
export { findProvider, type ProviderInfo, supportedProviderNames } from "./providers.ts";
export {
  DEFAULT_MODEL_NAME,
  loadedProviderPackages,
  loadLanguageModel,
  type OpenAIApi,
  type ResolvedModel,
  resolveModel,
} from "./resolve-model.ts";
export {
  type AnswerDecoder,
  formatPath,
  type InferSchema,
  isStrictCompatible,
  isZod3Schema,
  isZod4Schema,
  ResponseSchema,
  type SchemaCheck,
  type SchemaInput,
  type SchemaMismatch,
  type SchemaSource,
  toResponseSchema,
  type Zod3Schema,
  type Zod4Schema,
} from "./schema.ts";
export {
  checkJsonSchemaLimits,
  JSON_SCHEMA_LIMITS,
  JsonSchemaLimitError,
  type JsonSchemaLimitName,
  type JsonSchemaLimits,
} from "./schema-limits.ts";
export {
  findUrlFields,
  type UrlField,
  type UrlFieldStep,
  type UrlForId,
  type UrlIdOptions,
  withUrlFieldsAsIds,
} from "./url-fields.ts";
export { modelSupportsVision, textOnlyFamily, VISION_MODEL_SUGGESTIONS } from "./vision.ts";
