// Which models can read images. A screenshot sent to a text-only model is either rejected by the
// provider with an obscure message or silently dropped, so Deckhand refuses it before the call.

/** Names that say "this one sees": checked first, so `llama-3.2-11b-vision` is not caught below. */
const VISION_MARKERS =
  /vision|(^|[-_.:/])vl(\d|$|[-_.:])|\d(\.\d)?vl\b|llava|pixtral|moondream|minicpm-v|llama-?4|gemma-?3(?!.*:1b)/i;

/** Model families known to take text only. The model id is lower-cased, provider prefixes kept. */
const TEXT_ONLY_FAMILIES: readonly { pattern: RegExp; family: string }[] = [
  { pattern: /(^|\/)gpt-3\.5/, family: "GPT-3.5" },
  { pattern: /(^|\/)o1-mini|(^|\/)o3-mini/, family: "OpenAI o1-mini / o3-mini" },
  { pattern: /gpt-oss/, family: "gpt-oss" },
  { pattern: /deepseek/, family: "DeepSeek" },
  { pattern: /llama-?3([.-]?[0-3])?\b|llama3\.?[0-3]?(:|$)|llama-?2/, family: "Llama 2 / 3.x" },
  { pattern: /mixtral|codestral|open-mistral|mistral-7b|ministral/, family: "Mistral text models" },
  { pattern: /qwen-?[23](\.5)?|qwq|qwen-(turbo|plus|max)\b/, family: "Qwen (text)" },
  { pattern: /phi-?[1-3]/, family: "Phi" },
  { pattern: /gemma-?2/, family: "Gemma 2" },
  { pattern: /kimi-k2|moonshot-v1/, family: "Kimi" },
  { pattern: /command-r|command-a(?!-vision)/, family: "Cohere Command" },
  { pattern: /claude-(instant|2)/, family: "Claude 2 / Instant" },
];

/** What to suggest instead, for hosted and for local setups. */
export const VISION_MODEL_SUGGESTIONS = [
  "openai/gpt-4.1-mini",
  "anthropic/claude-sonnet-4-5",
  "google/gemini-2.5-flash",
  "ollama/qwen2.5vl",
  "ollama/llama3.2-vision",
];

/**
 * Whether a model accepts images: `explicit` (the `vision` field of a model object) wins; then the
 * family table; models not in the table are assumed to see, as current hosted models do.
 */
export function modelSupportsVision(modelId: string, explicit?: boolean): boolean {
  if (explicit !== undefined) return explicit;
  const id = modelId.toLowerCase();
  if (VISION_MARKERS.test(id)) return true;
  return !TEXT_ONLY_FAMILIES.some((f) => f.pattern.test(id));
}

/** The text-only family a model id belongs to, for messages. */
export function textOnlyFamily(modelId: string): string | undefined {
  const id = modelId.toLowerCase();
  if (VISION_MARKERS.test(id)) return undefined;
  return TEXT_ONLY_FAMILIES.find((f) => f.pattern.test(id))?.family;
}
