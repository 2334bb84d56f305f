// What a program sets on a page that must hold in each of its sessions (its own and those of its
// out-of-process iframes, including ones that attach later): scripts to run before each document's
// own (`addInitScript`) and extra HTTP headers (`setExtraHTTPHeaders`, the page's over its
// context's).

import { readFile } from "node:fs/promises";
import { ServiceInvalidArgumentError } from "../errors.ts";
import type { CdpSession } from "./cdp/connection.ts";

/** A function (called with `arg`), JavaScript source, or a file of it. */
export type InitScript<Arg = unknown> =
  | string
  | ((arg: Arg) => unknown)
  | { content?: string; path?: string };

/** The source an init script runs as. */
export async function initScriptSource<Arg>(script: InitScript<Arg>, arg?: Arg): Promise<string> {
  if (typeof script === "function") return `(${script.toString()})(${JSON.stringify(arg) ?? "undefined"});`;
  if (arg !== undefined) {
    throw new ServiceInvalidArgumentError(
      "addInitScript: an argument can only be passed to a function script.",
    );
  }
  if (typeof script === "string") return script;
  if (script && typeof script === "object") {
    if (typeof script.content === "string") return script.content;
    if (typeof script.path === "string") {
      try {
        return `${await readFile(script.path, "utf8")}\n//# sourceURL=${script.path}`;
      } catch (error) {
        throw new ServiceInvalidArgumentError(
          `addInitScript: could not read ${JSON.stringify(script.path)} (${(error as Error).message}).`,
        );
      }
    }
  }
  throw new ServiceInvalidArgumentError(
    "addInitScript takes a function, a string of JavaScript, or { content } / { path }.",
  );
}

/** Checks a header map: names and values must be strings. */
export function checkHeaders(headers: unknown, caller: string): Record<string, string> {
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) {
    throw new ServiceInvalidArgumentError(`${caller} takes an object of header names to string values.`);
  }
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value !== "string") {
      throw new ServiceInvalidArgumentError(
        `${caller}: the value of header ${JSON.stringify(name)} must be a string, got ${typeof value}.`,
      );
    }
  }
  return { ...(headers as Record<string, string>) };
}

/** What a page's context sets for all its pages. */
export interface ContextSettings {
  initScripts(): readonly string[];
  headers(): Record<string, string>;
}

export class SessionSettings {
  private readonly scripts: string[] = [];
  private pageHeaders: Record<string, string> = {};
  private readonly sessions: () => Iterable<CdpSession>;
  private readonly context: ContextSettings;

  constructor(sessions: () => Iterable<CdpSession>, context: ContextSettings) {
    this.sessions = sessions;
    this.context = context;
  }

  /** The commands a session that attaches now needs (sent with its other set-up commands). */
  setup(session: CdpSession): Promise<unknown>[] {
    const commands: Promise<unknown>[] = [...this.context.initScripts(), ...this.scripts].map((source) =>
      session.send("Page.addScriptToEvaluateOnNewDocument", { source }),
    );
    const headers = this.headers();
    if (Object.keys(headers).length > 0)
      commands.push(session.send("Network.setExtraHTTPHeaders", { headers }));
    return commands;
  }

  async addInitScript(source: string): Promise<void> {
    this.scripts.push(source);
    await this.installScript(source);
  }

  /** Installs a script the context added (it keeps the list) in this page's sessions. */
  async installScript(source: string): Promise<void> {
    await this.everywhere((session) => session.send("Page.addScriptToEvaluateOnNewDocument", { source }));
  }

  async setPageHeaders(headers: Record<string, string>): Promise<void> {
    this.pageHeaders = headers;
    await this.applyHeaders();
  }

  /** Sends the headers again (after the context's changed). */
  async applyHeaders(): Promise<void> {
    const headers = this.headers();
    await this.everywhere((session) => session.send("Network.setExtraHTTPHeaders", { headers }));
  }

  private headers(): Record<string, string> {
    return { ...this.context.headers(), ...this.pageHeaders };
  }

  private async everywhere(command: (session: CdpSession) => Promise<unknown>): Promise<void> {
    await Promise.all(
      [...this.sessions()].map((session) =>
        command(session).catch((error: unknown) => {
          // A frame that went away meanwhile needs nothing more.
          if (!session.detached) throw error;
        }),
      ),
    );
  }
}
