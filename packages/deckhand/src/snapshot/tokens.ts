// A fast token estimate for outline text. Counting with a real tokenizer costs more than taking
// the snapshot on large pages; this estimate is calibrated against o200k on outlines (see
// bench/snapshot.ts, which checks budgets with the real tokenizer): outlines measure 2.6 to 3.0
// characters per token, so dividing by 2.55 errs on the high side.

const CHARS_PER_TOKEN = 2.55;

export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}
