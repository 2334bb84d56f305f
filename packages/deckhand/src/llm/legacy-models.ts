// Bare model names as the reference library's older releases took them ("gpt-4.1-nano",
// "claude-3-7-sonnet-latest"): known families are mapped to their provider, so a program or an HTTP
// client written for them keeps working, with a deprecation warning. A bare name of no known family
// is still an error (InvalidAISDKModelFormatError), since guessing a provider would send the
// caller's prompts somewhere they did not choose.

interface Family {
  /** Matches the bare name; group 1, when present, is the model id without the family's prefix. */
  pattern: RegExp;
  provider: string;
}

// Prefix rules rather than a list of names: new model ids of a family keep working.
const FAMILIES: readonly Family[] = [
  { pattern: /^(?:gpt-|chatgpt-|o[1-9](?:-|$))/i, provider: "openai" },
  { pattern: /^claude-/i, provider: "anthropic" },
  { pattern: /^gemini-/i, provider: "google" },
  // The reference wrote these with the provider as a prefix of the id: "cerebras-llama-3.3-70b".
  { pattern: /^cerebras-(.+)$/i, provider: "cerebras" },
  { pattern: /^groq-(.+)$/i, provider: "groq" },
];

/**
 * `"provider/model"` for a bare legacy name of a known family (`gpt-4.1-nano` -> `openai/gpt-4.1-nano`,
 * `cerebras-llama-3.3-70b` -> `cerebras/llama-3.3-70b`); undefined for a name that has a provider
 * already or belongs to no known family.
 */
export function legacyModelName(name: string): string | undefined {
  const bare = name.trim();
  if (bare === "" || bare.includes("/") || /\s/.test(bare)) return undefined;
  for (const family of FAMILIES) {
    const match = family.pattern.exec(bare);
    if (match) return `${family.provider}/${match[1] ?? bare}`;
  }
  return undefined;
}

/** The deprecation warning for a bare name that was mapped. */
export function legacyModelWarning(bare: string, mapped: string): string {
  return (
    `The model name ${JSON.stringify(bare)} has no provider; it is read as ${JSON.stringify(mapped)}. ` +
    `Bare model names are deprecated: write "${mapped}".`
  );
}
