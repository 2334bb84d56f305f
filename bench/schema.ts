// schema: what one caller's JSON Schema costs the process that prepares it (the limits check and
// ajv's compilation, both on the event loop), at sizes up to Deckhand's limits, so that the limits
// can be judged by the time they allow; and how fast a schema over a limit is refused.

import { checkJsonSchemaLimits, JSON_SCHEMA_LIMITS, JsonSchemaLimitError } from "deckhand";
import { toResponseSchema } from "../packages/deckhand/src/llm/schema.ts";
import { checkTarget, emptyOutput, fmtInt, fmtMs, type SuiteOutput } from "./support/report.ts";
import { summarize } from "./support/stats.ts";
import type { Suite, SuiteContext } from "./support/suite.ts";

const names = (n: number) => Array.from({ length: n }, (_, i) => `field_${i}`);

interface Case {
  label: string;
  schema: (salt: number) => Record<string, unknown>;
}

// Each schema gets a salt so that every repetition is a new schema (no compiled copy to reuse).
const CASES: Case[] = [
  {
    label: "10 properties",
    schema: (salt) => ({
      type: "object",
      description: `run ${salt}`,
      properties: Object.fromEntries(names(10).map((n) => [n, { type: "string" }])),
    }),
  },
  {
    label: "enum of 1,000 values (limit)",
    schema: (salt) => ({
      type: "object",
      properties: { v: { type: "string", enum: names(1000).map((n) => `${n}_${salt}`) } },
    }),
  },
  {
    label: "500 properties (limit)",
    schema: (salt) => ({
      type: "object",
      description: `run ${salt}`,
      properties: Object.fromEntries(names(500).map((n) => [n, { type: "string" }])),
    }),
  },
  {
    label: "200 anyOf members (limit)",
    schema: (salt) => ({ description: `run ${salt}`, anyOf: names(200).map((n) => ({ const: n })) }),
  },
  {
    label: "32,000 characters (limit), 4 anyOf of 50",
    schema: (salt) => ({
      type: "object",
      description: `run ${salt} ${"x".repeat(20_000)}`,
      properties: Object.fromEntries(
        names(4).map((n) => [n, { anyOf: names(50).map((m) => ({ const: `${m}-${n}` })) }]),
      ),
    }),
  },
];

export const schemaSuite: Suite = {
  name: "schema",
  title: "JSON Schema limits check and compilation, up to the limits",
  async run(ctx: SuiteContext): Promise<SuiteOutput> {
    const output = emptyOutput();
    const reps = ctx.reps(15, 5);
    const rows: (string | number)[][] = [];
    let worst = 0;
    let salt = 0;
    toResponseSchema({ type: "string" }); // ajv's own start-up is not a schema's cost
    for (const c of CASES) {
      ctx.progress(`schema: ${c.label}`);
      const samples: number[] = [];
      let size = 0;
      for (let i = 0; i < reps; i++) {
        const schema = c.schema(++salt);
        size = JSON.stringify(schema).length;
        const started = performance.now();
        toResponseSchema(schema);
        samples.push(performance.now() - started);
      }
      const summary = summarize(samples);
      worst = Math.max(worst, summary.median);
      rows.push([c.label, fmtInt(size), fmtMs(summary.median), fmtMs(summary.p95)]);
      output.figures[c.label] = summary;
    }

    // Refusals: the check stops at the first limit crossed.
    const refusals: [string, unknown][] = [
      ["enum of 60,000 values", { type: "object", properties: { v: { enum: names(60_000) } } }],
      [
        "3,000 levels of nesting",
        (() => {
          let s: Record<string, unknown> = { type: "string" };
          for (let i = 0; i < 3000; i++) s = { type: "object", properties: { a: s } };
          return s;
        })(),
      ],
    ];
    for (const [label, schema] of refusals) {
      const samples: number[] = [];
      for (let i = 0; i < reps; i++) {
        const started = performance.now();
        try {
          checkJsonSchemaLimits(schema);
        } catch (error) {
          if (!(error instanceof JsonSchemaLimitError)) throw error;
        }
        samples.push(performance.now() - started);
      }
      const summary = summarize(samples);
      rows.push([`refused: ${label}`, "-", fmtMs(summary.median), fmtMs(summary.p95)]);
      output.figures[`refused: ${label}`] = summary;
    }

    output.tables.push({
      title: "One JSON Schema, checked and compiled (toResponseSchema), a new schema each time",
      columns: ["schema", "characters", "median ms", "p95 ms"],
      rows,
      notes: [
        `Limits: ${Object.entries(JSON_SCHEMA_LIMITS)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ")}.`,
        "All of it runs on the event loop of the process (the service's, for a REMOTE extract).",
      ],
    });
    output.targets.push(checkTarget("slowest schema within the limits, median", worst, "ms", "<=", 150));
    return output;
  },
};
