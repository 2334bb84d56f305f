// Text helpers shared by the outline's modules: whitespace collapsed, long text clipped, values quoted.
//
// Self-contained: `installText` is sent to the page as source text.

export function installText() {
  function collapse(text: string): string {
    return text.replace(/\s+/g, " ");
  }

  function clip(text: string, max: number): string {
    const t = text.trim();
    return t.length > max ? `${t.slice(0, max - 1)}…` : t;
  }

  function quote(text: string): string {
    return JSON.stringify(clip(text, 120));
  }

  /**
   * A name as a person reads it, for comparing names (explicit instructions): spacing and a
   * trailing ":" or "*" aside, case kept. nameKey() also sets case aside. The outline's look-up by
   * name and the Node side compare with these same functions, so the two cannot disagree.
   */
  function plainName(name: string): string {
    return name
      .normalize("NFKC")
      .replace(/\s+/g, " ")
      .replace(/[\s:*]+$/, "")
      .trim();
  }

  function nameKey(name: string): string {
    return plainName(name).toLowerCase();
  }

  return { collapse, clip, quote, plainName, nameKey };
}

export type TextHelpers = ReturnType<typeof installText>;
