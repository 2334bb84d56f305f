// `deckhand-server keys create | list | revoke`: API key administration, straight on the store
// (the server may be running at the same time; both back ends allow it).

import type { Writable } from "node:stream";
import { openStore } from "../store/open-store.ts";
import type { CreatedKey, KeyInfo } from "../store/store.ts";
import type { StoreLocation } from "./options.ts";

/** The lines that show a new key, used by `keys create` and by the first start. */
export function announceKey(created: CreatedKey): string {
  return [
    "",
    `New API key ${created.id}${created.name ? ` (${created.name})` : ""}, project ${created.projectId}:`,
    "",
    `    ${created.key}`,
    "",
    "Store it now: it is shown only this once (the service keeps only a hash).",
    "Clients send it in the x-platform-api-key header.",
    "",
  ].join("\n");
}

function formatTable(keys: KeyInfo[]): string {
  if (keys.length === 0) return "No API keys. Create one with: deckhand-server keys create --name NAME\n";
  const rows = [
    ["ID", "NAME", "PROJECT", "CREATED", "STATUS"],
    ...keys.map((key) => [
      key.id,
      key.name ?? "-",
      key.projectId,
      new Date(key.createdAt).toISOString(),
      key.revokedAt ? `revoked ${new Date(key.revokedAt).toISOString()}` : "active",
    ]),
  ];
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return `${rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")}\n`;
}

export async function createKeyCommand(
  options: StoreLocation & { name?: string; projectId?: string; json: boolean },
  out: Writable,
): Promise<number> {
  const store = await openStore(options);
  try {
    const created = await store.createKey({
      ...(options.name !== undefined ? { name: options.name } : {}),
      ...(options.projectId !== undefined ? { projectId: options.projectId } : {}),
    });
    out.write(options.json ? `${JSON.stringify(created)}\n` : announceKey(created));
    return 0;
  } finally {
    await store.close();
  }
}

export async function listKeysCommand(
  options: StoreLocation & { json: boolean },
  out: Writable,
): Promise<number> {
  const store = await openStore(options);
  try {
    const keys = await store.listKeys();
    out.write(options.json ? `${JSON.stringify(keys)}\n` : formatTable(keys));
    return 0;
  } finally {
    await store.close();
  }
}

export async function revokeKeyCommand(
  options: StoreLocation & { id: string },
  out: Writable,
  err: Writable,
): Promise<number> {
  const store = await openStore(options);
  try {
    if (await store.revokeKey(options.id)) {
      out.write(`Revoked API key ${options.id}. Requests with it are rejected from now on.\n`);
      return 0;
    }
    err.write(`No active API key with id ${JSON.stringify(options.id)}. See: deckhand-server keys list\n`);
    return 1;
  } finally {
    await store.close();
  }
}
