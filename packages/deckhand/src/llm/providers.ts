// The model providers Deckhand knows by name: which AI SDK package serves each, where it lives
// by default, and which environment variable holds its key.

export type ProviderPackage =
  | "@ai-sdk/openai"
  | "@ai-sdk/anthropic"
  | "@ai-sdk/google"
  | "@ai-sdk/openai-compatible";

export interface ProviderInfo {
  /** The canonical name, as written before the slash of a model string. */
  name: string;
  package: ProviderPackage;
  /** Where requests go when neither the option nor the base-URL variable gives an address. */
  defaultBaseURL?: string;
  /** Environment variables that may hold the key, first one preferred. */
  keyEnv: string[];
  /** Environment variable that may hold the base URL. */
  baseURLEnv?: string;
  /** Whether a request without a key is pointless (hosted APIs) or normal (local servers). */
  needsKey: boolean;
  /** How the answer's shape is asked for at first: `json_schema` where the endpoint honours a JSON
   * Schema response format, else `json_object` (JSON mode, the schema in the prompt). */
  structuredOutputs: "json_schema" | "json_object" | "prompt";
  /** A server people run themselves (Ollama, LM Studio, vLLM, llama.cpp): structured output and
   * tool calling vary by version and model, so the schema also goes into the prompt. */
  localServer?: boolean;
}

const compatible = (
  name: string,
  defaultBaseURL: string | undefined,
  keyEnv: string[],
  needsKey: boolean,
  structuredOutputs = true,
  localServer = false,
): ProviderInfo => ({
  name,
  package: "@ai-sdk/openai-compatible",
  ...(defaultBaseURL ? { defaultBaseURL } : {}),
  keyEnv,
  baseURLEnv: `${name.toUpperCase()}_BASE_URL`,
  needsKey,
  structuredOutputs: structuredOutputs ? "json_schema" : "json_object",
  ...(localServer ? { localServer } : {}),
});

const PROVIDERS: readonly ProviderInfo[] = [
  {
    name: "openai",
    package: "@ai-sdk/openai",
    keyEnv: ["OPENAI_API_KEY"],
    baseURLEnv: "OPENAI_BASE_URL",
    needsKey: true,
    structuredOutputs: "json_schema",
  },
  {
    name: "anthropic",
    package: "@ai-sdk/anthropic",
    keyEnv: ["ANTHROPIC_API_KEY"],
    baseURLEnv: "ANTHROPIC_BASE_URL",
    needsKey: true,
    structuredOutputs: "json_schema",
  },
  {
    name: "google",
    package: "@ai-sdk/google",
    keyEnv: ["GOOGLE_GENERATIVE_AI_API_KEY", "GEMINI_API_KEY"],
    needsKey: true,
    structuredOutputs: "json_schema",
  },
  compatible("ollama", "http://127.0.0.1:11434/v1", ["OLLAMA_API_KEY"], false, true, true),
  compatible("lmstudio", "http://127.0.0.1:1234/v1", ["LMSTUDIO_API_KEY"], false, true, true),
  compatible("vllm", undefined, ["VLLM_API_KEY"], false, true, true),
  // llama.cpp's llama-server (default port 8080).
  compatible("llamacpp", "http://127.0.0.1:8080/v1", ["LLAMACPP_API_KEY"], false, true, true),
  // Groq honours json_schema only on some models; JSON mode plus the schema in the prompt works on all.
  compatible("groq", "https://api.groq.com/openai/v1", ["GROQ_API_KEY"], true, false),
  compatible("deepseek", "https://api.deepseek.com/v1", ["DEEPSEEK_API_KEY"], true, false),
  compatible("together", "https://api.together.xyz/v1", ["TOGETHER_API_KEY", "TOGETHER_AI_API_KEY"], true),
  compatible("mistral", "https://api.mistral.ai/v1", ["MISTRAL_API_KEY"], true),
  compatible("xai", "https://api.x.ai/v1", ["XAI_API_KEY"], true),
  compatible("cerebras", "https://api.cerebras.ai/v1", ["CEREBRAS_API_KEY"], true),
  compatible("openrouter", "https://openrouter.ai/api/v1", ["OPENROUTER_API_KEY"], true),
];

const ALIASES: Readonly<Record<string, string>> = {
  gemini: "google",
  "lm-studio": "lmstudio",
  grok: "xai",
  "llama.cpp": "llamacpp",
  "llama-cpp": "llamacpp",
};

/** The known provider for a name (case-insensitive, aliases accepted), if any. */
export function findProvider(name: string): ProviderInfo | undefined {
  const lower = name.toLowerCase();
  const canonical = ALIASES[lower] ?? lower;
  return PROVIDERS.find((p) => p.name === canonical);
}

/** Provider names for messages, aliases in parentheses. */
export function supportedProviderNames(): string {
  return PROVIDERS.map((p) => {
    const aliases = Object.entries(ALIASES)
      .filter(([, target]) => target === p.name)
      .map(([alias]) => alias);
    return aliases.length ? `${p.name} (or ${aliases.join(", ")})` : p.name;
  }).join(", ");
}

/** An OpenAI-compatible endpoint under a name Deckhand does not know (requires a baseURL). */
export function customCompatibleProvider(name: string): ProviderInfo {
  const envName = name.toUpperCase().replace(/[^A-Z0-9]+/g, "_");
  return {
    name,
    package: "@ai-sdk/openai-compatible",
    keyEnv: [`${envName}_API_KEY`],
    needsKey: false,
    structuredOutputs: "json_schema",
    localServer: true,
  };
}
