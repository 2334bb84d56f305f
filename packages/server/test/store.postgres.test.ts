import crypto from "node:crypto";
import pg from "pg";
import { describe } from "vitest";
import { PostgresStore } from "../src/store/postgres-store.ts";
import { storeContract } from "./store.contract.ts";

const url = process.env.DECKHAND_TEST_DATABASE_URL;

// CI sets DECKHAND_TEST_DATABASE_URL to a real server; without it the suite is skipped, and says why.
if (!url) {
  console.warn(
    "PostgreSQL store tests skipped: set DECKHAND_TEST_DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test).",
  );
}
describe.skipIf(!url)(
  url ? "PostgreSQL store" : "PostgreSQL store (skipped: DECKHAND_TEST_DATABASE_URL is not set)",
  () => {
    storeContract(async () => {
      // A schema of its own per run, dropped afterwards: runs never see each other's rows.
      const schema = `deckhand_test_${crypto.randomBytes(6).toString("hex")}`;
      const query = async (text: string) => {
        const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` });
        await client.connect();
        try {
          return (await client.query(text)).rows;
        } finally {
          await client.end();
        }
      };
      return {
        open: () => PostgresStore.open({ url: url!, schema }),
        rawRows: (table) => query(`SELECT * FROM ${table}`),
        dispose: async () => {
          await query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        },
      };
    });
  },
);
