// The session report's renderer on its own: any recorded operation shows (agent runs with their own
// steps listed), failures stand out, and nothing it is given becomes markup.

import { renderSessionReport, reportCsp, stepInstruction } from "deckhand";
import { describe, expect, it } from "vitest";

const PAYLOAD = `<script>alert(1)</script><img src=x onerror=alert(2)>`;

describe("renderSessionReport", () => {
  it("lists an agent run's own steps under it, escaped, with the failed one marked", () => {
    const html = renderSessionReport({
      title: `Run ${PAYLOAD}`,
      steps: [
        {
          method: "agentExecute",
          pageUrl: "https://shop.example/",
          parameters: { executeOptions: { instruction: `buy the shirt ${PAYLOAD}` } },
          result: {
            success: true,
            message: "done",
            actions: [
              {
                type: "goto",
                arguments: { url: "https://shop.example/shirts" },
                success: true,
                durationMs: 120,
              },
              { type: "act", arguments: { instruction: `click ${PAYLOAD}` }, success: false },
              { type: "done", reasoning: "the shirt is in the cart", taskCompleted: true },
            ],
          },
          timestamp: 1_700_000_000_000,
          endTime: 1_700_000_004_000,
          tokenUsage: { inputTokens: 1200, outputTokens: 80 },
        },
      ],
    });
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img src=x");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    const substeps = /<ol class="substeps"[^>]*>(.*?)<\/ol>/s.exec(html)?.[1] ?? "";
    expect(substeps.match(/<li/g)).toHaveLength(3);
    expect(substeps).toContain("https://shop.example/shirts");
    expect(substeps).toMatch(/<li class="bad"><span class="method">act<\/span> click &lt;script&gt;/);
    expect(substeps).toContain("the shirt is in the cart");
    expect(html).toContain("tokens 1200 in / 80 out");
  });

  it("reads the instruction of every kind of operation", () => {
    expect(stepInstruction({ method: "act", parameters: { input: "click it" } })).toBe("click it");
    expect(
      stepInstruction({
        method: "act",
        parameters: { input: { selector: "/html/body/button", method: "click" } },
      }),
    ).toBe("click /html/body/button");
    expect(stepInstruction({ method: "extract", parameters: { instruction: "the price" } })).toBe(
      "the price",
    );
    expect(stepInstruction({ method: "navigate", parameters: { url: "https://a.test/" } })).toBe(
      "https://a.test/",
    );
    expect(
      stepInstruction({ method: "agentExecute", parameters: { executeOptions: { instruction: "do it" } } }),
    ).toBe("do it");
  });

  it("allows no script, and images only from where it is told", () => {
    const csp = reportCsp("'self'");
    expect(csp).toContain("script-src 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toContain("img-src 'self'");
  });

  it("shows a failed step's call log as a list: from the error's message, as the service records it", () => {
    const html = renderSessionReport({
      title: "Session",
      steps: [
        {
          method: "act",
          pageUrl: "https://shop.example/",
          parameters: { input: "click buy" },
          result: {
            success: false,
            message:
              'Not done: Could not click "#buy": it is covered by another element: <div id="consent">.\nCall log:\n' +
              '  - click: waiting for locator("#buy")\n  - <div id="consent"> intercepts pointer events - retrying x 9',
          },
          timestamp: 1_700_000_000_000,
        },
      ],
    });
    expect(html).toContain(
      '<ul class="calllog" aria-label="Call log"><li>click: waiting for locator(&quot;#buy&quot;)</li>' +
        "<li>&lt;div id=&quot;consent&quot;&gt; intercepts pointer events - retrying x 9</li></ul>",
    );
    // The error line itself stops where the log begins.
    expect(html).toMatch(/Failed: Not done: Could not click &quot;#buy&quot;: [^<]*consent&quot;&gt;\.<\/p>/);
  });
});
