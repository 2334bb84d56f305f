// What the agent needs from the Deckhand instance it runs in. The facade gives it its own public
// act and extract (so every call the agent's tools make is checked, recorded in the history and
// counted in the metrics as if the caller had made it), its log, its secrets and its metrics.

import type { Page } from "../browser/page.ts";
import type { ActionCacheStore } from "../cache/action-cache.ts";
import type { SchemaInput } from "../llm/schema.ts";
import type { DeckhandLog, SecretRedactor } from "../log.ts";
import type { MetricsRecorder } from "../metrics.ts";
import type { Action, ActResult, ModelConfiguration, Variables } from "../types.ts";

export interface HostCallOptions {
  page: Page;
  model?: ModelConfiguration;
  signal?: AbortSignal;
  timeout?: number;
}

export interface AgentHost {
  act(input: string | Action, options: HostCallOptions & { variables?: Variables }): Promise<ActResult>;
  extract(instruction: string, schema: SchemaInput | undefined, options: HostCallOptions): Promise<unknown>;
  log: DeckhandLog;
  redactor: SecretRedactor;
  metrics: MetricsRecorder;
  /** The instance's model (the agent's default). */
  defaultModel: ModelConfiguration | undefined;
  /** Where successful runs are stored for replay (`cacheDir` / `actionCache`). */
  cacheStore: ActionCacheStore | undefined;
  domSettleTimeout: number | undefined;
}
