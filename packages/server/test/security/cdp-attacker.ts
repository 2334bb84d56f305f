// What an attacker holding one valid API key uses in these tests: a raw CDP client on the session's
// proxy (any method, any parameters, on the root or on any session id), and the service's own view
// of a session's browser to check from the outside what really happened.

import WebSocket from "ws";
import type { LiveService } from "../live-helpers.ts";

export interface CdpReply {
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

export interface RawCdpClient {
  /** Sends a command and resolves with the whole answer (result or error), never rejecting on an error. */
  send(method: string, params?: Record<string, unknown>, sessionId?: string): Promise<CdpReply>;
  /** Sends and returns the result; throws with the CDP error's message. */
  call<T = Record<string, unknown>>(
    method: string,
    params?: Record<string, unknown>,
    sessionId?: string,
  ): Promise<T>;
  /** Every event received so far. */
  events: { method: string; params: Record<string, unknown>; sessionId?: string }[];
  /** Attaches to a target of the session (flatten) and returns the session id. */
  attach(targetId: string): Promise<string>;
  /** The session's page targets as the proxy shows them. */
  pages(): Promise<{ targetId: string; url: string }[]>;
  /** Resolves when the socket closes, with the close code. */
  closed: Promise<number>;
  readonly socket: WebSocket;
  close(): void;
}

export function proxyUrl(svc: LiveService, sessionId: string): string {
  return `${svc.url.replace("http:", "ws:")}/v1/sessions/${sessionId}/cdp`;
}

export async function rawCdpClient(svc: LiveService, sessionId: string, key: string): Promise<RawCdpClient> {
  const socket = new WebSocket(proxyUrl(svc, sessionId), { headers: { "x-platform-api-key": key } });
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("error", reject);
  });
  let nextId = 1;
  const pending = new Map<number, (reply: CdpReply) => void>();
  const events: RawCdpClient["events"] = [];
  const closed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));
  socket.on("message", (data) => {
    const message = JSON.parse(data.toString());
    if (typeof message.id === "number") {
      pending.get(message.id)?.(message);
      pending.delete(message.id);
    } else if (message.method) events.push(message);
  });
  const send: RawCdpClient["send"] = (method, params = {}, sessionId) => {
    const id = nextId++;
    return new Promise<CdpReply>((resolve) => {
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  };
  const call: RawCdpClient["call"] = async <T>(
    method: string,
    params: Record<string, unknown> = {},
    sessionId?: string,
  ) => {
    const reply = await send(method, params, sessionId);
    if (reply.error) throw new Error(reply.error.message);
    return reply.result as T;
  };
  return {
    send,
    call,
    events,
    closed,
    socket,
    attach: async (targetId) =>
      (await call<{ sessionId: string }>("Target.attachToTarget", { targetId, flatten: true })).sessionId,
    pages: async () =>
      (
        await call<{ targetInfos: { targetId: string; type: string; url: string }[] }>("Target.getTargets")
      ).targetInfos
        .filter((t) => t.type === "page")
        .map(({ targetId, url }) => ({ targetId, url })),
    close: () => socket.close(),
  };
}

/** The text of every page of a session, read by the service itself (not through the proxy). */
export async function sessionTexts(svc: LiveService, sessionId: string): Promise<string[]> {
  const live = svc.service.sessions.get(sessionId);
  if (!live) return [];
  const texts: string[] = [];
  for (const page of live.dh.context.pages()) {
    texts.push(
      `${page.url()}\n${await page.evaluate("document.documentElement?.innerText ?? ''").catch(() => "")}`,
    );
  }
  return texts;
}
