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

  return { collapse, clip, quote };
}

export type TextHelpers = ReturnType<typeof installText>;
