// Where an outline's tokens go (o200k): by kind of line, and what the indentation and the `[id]`
// markers cost, so that a token target that is missed says what to cut.

import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

export interface TokenShare {
  kind: string;
  lines: number;
  /** o200k tokens of these lines on their own (indentation included). */
  tokens: number;
}

export interface TokenBreakdown {
  total: number;
  kinds: TokenShare[];
  /** Tokens saved if every line lost its indentation. */
  indentation: number;
  /** Tokens saved if every `[N] ` marker were dropped. */
  ids: number;
}

function kindOf(line: string): string {
  const body = line.trimStart();
  if (body.includes(" | ")) return "table rows";
  const role = /^\[\d+\] ([^:]+):/.exec(body)?.[1] ?? /^\[\d+\] (\S+)/.exec(body)?.[1];
  if (role) return `[id] ${role}`;
  return "text and landmarks";
}

export function tokenBreakdown(text: string): TokenBreakdown {
  const total = countTokens(text);
  const groups = new Map<string, string[]>();
  const lines = text.split("\n");
  for (const line of lines) {
    const kind = kindOf(line);
    const list = groups.get(kind) ?? [];
    list.push(line);
    groups.set(kind, list);
  }
  const kinds = [...groups]
    .map(([kind, list]) => ({ kind, lines: list.length, tokens: countTokens(list.join("\n")) }))
    .sort((a, b) => b.tokens - a.tokens);
  const unindented = lines.map((l) => l.trimStart()).join("\n");
  const withoutIds = text.replace(/\[\d+\] /g, "");
  return { total, kinds, indentation: total - countTokens(unindented), ids: total - countTokens(withoutIds) };
}
