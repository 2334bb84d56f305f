// `logInferenceToFile`: one JSON file per model call, for looking at what the model was asked and
// what it said. Everything passes through the client's SecretRedactor first, and images become a
// placeholder, so the files can be shared.

import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { SecretRedactor } from "../log.ts";
import type { JSONSchema, LLMMessage, LLMUsage } from "./client.ts";

/** The default directory, relative to the working directory. */
export const DEFAULT_INFERENCE_LOG_DIR = "./inference_summary";

export interface InferenceRecord {
  operation: string;
  model: string;
  /** 1 for the first call of an operation's request, 2 for the retry after a bad answer. */
  attempt: number;
  /** ISO 8601 time the call started. */
  startedAt: string;
  inferenceTimeMs: number;
  messages: readonly LLMMessage[];
  schema?: JSONSchema;
  /** The parsed answer, or the raw text when it could not be parsed. */
  answer?: unknown;
  usage?: LLMUsage;
  /** Why the call or its answer failed, if it did. */
  error?: string;
}

function byteLength(image: Uint8Array | string): number {
  return typeof image === "string" ? Math.floor((image.length * 3) / 4) : image.byteLength;
}

/** Messages with each image replaced by a short placeholder. */
export function messagesWithoutImages(messages: readonly LLMMessage[]): unknown[] {
  return messages.map((m) => ({
    role: m.role,
    content:
      typeof m.content === "string"
        ? m.content
        : m.content.map((part) =>
            part.type === "image"
              ? {
                  type: "image",
                  image: `[image ${part.mediaType ?? "image/png"}, ${byteLength(part.image)} bytes]`,
                }
              : part,
          ),
  }));
}

let sequence = 0;

export class InferenceFileLog {
  readonly dir: string;
  private readonly redactor: SecretRedactor;
  private ready: Promise<unknown> | undefined;

  constructor(dir: string | undefined, redactor: SecretRedactor) {
    this.dir = resolve(dir ?? DEFAULT_INFERENCE_LOG_DIR);
    this.redactor = redactor;
  }

  /** Writes one record and returns the file's path. */
  async write(record: InferenceRecord): Promise<string> {
    this.ready ??= mkdir(this.dir, { recursive: true });
    await this.ready;
    sequence++;
    const stamp = record.startedAt.replace(/[:.]/g, "-");
    const file = join(
      this.dir,
      `${stamp}-${process.pid}-${String(sequence).padStart(4, "0")}-${record.operation}.json`,
    );
    const safe = this.redactor.redactValue({ ...record, messages: messagesWithoutImages(record.messages) });
    await writeFile(file, `${JSON.stringify(safe, null, 2)}\n`, "utf8");
    return file;
  }
}
