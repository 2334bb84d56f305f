import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { describe } from "vitest";
import { SQLITE_FILE_NAME, SqliteStore } from "../src/store/sqlite-store.ts";
import { storeContract } from "./store.contract.ts";

describe("SQLite store", () => {
  storeContract(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "deckhand-store-"));
    const file = path.join(dir, SQLITE_FILE_NAME);
    return {
      open: async () => new SqliteStore(dir),
      rawRows: async (table) => {
        const db = new DatabaseSync(file, { readOnly: true });
        try {
          return db.prepare(`SELECT * FROM ${table}`).all();
        } finally {
          db.close();
        }
      },
      rawBytes: async () =>
        Buffer.concat([file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f))),
      dispose: async () => rmSync(dir, { recursive: true, force: true }),
    };
  });
});
