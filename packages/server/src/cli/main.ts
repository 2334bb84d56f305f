// Dispatch of the deckhand-server command line.

import type { Writable } from "node:stream";
import type { SessionHandlers } from "../routes/handlers.ts";
import { HELP } from "./help.ts";
import { parseCommand, UsageError } from "./options.ts";

export interface CliIo {
  env: NodeJS.ProcessEnv;
  out: Writable;
  err: Writable;
}

/**
 * Runs one command line; resolves to the process exit code. The commands are loaded when chosen,
 * so that `--help` and usage errors answer without loading the server.
 */
export async function main(
  argv: readonly string[],
  io: CliIo,
  handlers: Partial<SessionHandlers> = {},
): Promise<number> {
  try {
    const command = parseCommand(argv, io.env);
    switch (command.kind) {
      case "help":
        io.out.write(HELP);
        return 0;
      case "serve":
        return await (await import("./serve.ts")).serveCommand(command, io.env, io.out, handlers);
      case "keys-create":
        return await (await import("./keys.ts")).createKeyCommand(command, io.out);
      case "keys-list":
        return await (await import("./keys.ts")).listKeysCommand(command, io.out);
      case "keys-revoke":
        return await (await import("./keys.ts")).revokeKeyCommand(command, io.out, io.err);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.err.write(`deckhand-server: ${error.message}\n`);
      return 2;
    }
    io.err.write(`deckhand-server: ${(error as Error).message ?? String(error)}\n`);
    return 1;
  }
}
