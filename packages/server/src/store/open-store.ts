// Chooses the back end: PostgreSQL when a database URL is given, otherwise SQLite in the data
// directory. Each back end is loaded only when chosen, so a SQLite deployment never loads `pg`
// and a PostgreSQL one never opens `node:sqlite`.

import type { Store } from "./store.ts";

export interface OpenStoreOptions {
  /** Directory of the SQLite file (`deckhand.db`). Used when `databaseUrl` is not set. */
  dataDir?: string;
  /** PostgreSQL connection URL; when set, the store is PostgreSQL. */
  databaseUrl?: string;
  /** PostgreSQL only: keep the tables in this schema. */
  schema?: string;
  /** As `schema` (the command line's name for it). */
  databaseSchema?: string;
}

export const DEFAULT_DATA_DIR = ".deckhand";

export async function openStore(options: OpenStoreOptions = {}): Promise<Store> {
  if (options.databaseUrl) {
    const { PostgresStore } = await import("./postgres-store.ts");
    const schema = options.schema ?? options.databaseSchema;
    return PostgresStore.open({ url: options.databaseUrl, ...(schema !== undefined ? { schema } : {}) });
  }
  const { SqliteStore } = await import("./sqlite-store.ts");
  return new SqliteStore(options.dataDir ?? DEFAULT_DATA_DIR);
}
