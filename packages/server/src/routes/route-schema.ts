// Pieces every route's schema shares: the security requirement and the documented error answers.

import type { z } from "zod";
import { ErrorResponse } from "../schemas/common.ts";

export const SECURITY_SCHEMES = {
  PlatformApiKey: {
    type: "apiKey",
    in: "header",
    name: "x-platform-api-key",
    description: "The API key (`deckhand-server keys create`). Keys are project-scoped.",
  },
  PlatformProjectId: {
    type: "apiKey",
    in: "header",
    name: "x-platform-project-id",
    description:
      "Deprecated: accepted and ignored. Keys are project-scoped, so this header is no longer required.",
    "x-deprecated": true,
  },
  PlatformApiKeyQuery: {
    type: "apiKey",
    in: "query",
    name: "apiKey",
    description:
      "The API key as a query parameter, accepted only by the CDP WebSocket endpoint, for WebSocket clients " +
      "that cannot set headers.",
  },
} as const;

/** The CDP WebSocket endpoint: the key header, or the key in the query. */
export const CDP_SECURITY: { [scheme: string]: string[] }[] = [
  { PlatformApiKey: [] },
  { PlatformApiKeyQuery: [] },
];

/** Spec 5 lists both schemes together; the key alone is enough, the project id is optional. */
export const SECURITY: { [scheme: string]: string[] }[] = [
  { PlatformApiKey: [], PlatformProjectId: [] },
  { PlatformApiKey: [] },
];

const ERROR_DESCRIPTIONS = {
  400: "Invalid request; the message names the field.",
  401: "Missing, invalid or revoked API key (KEY_REVOKED: revoked while the operation ran, which was stopped; a stream ends with an error event of that code).",
  404: "No such session for this API key's project (or no such route).",
  409: "The session runs on another node of the service (SESSION_ELSEWHERE, details.nodeId); this node leaves it alone.",
  410: "The session has ended.",
  413: "The request body is larger than the service accepts.",
  422: "The operation could not be done on the page as asked (element not found, data not matching the schema); the message says why.",
  426: "Not a WebSocket request: connect with a WebSocket client.",
  429: "The service is at its session capacity.",
  500: "Internal error; details only in the service's log.",
  501: "Not implemented by this service yet.",
  502: "The web page or the model provider failed (navigation error, unusable model answer).",
  503: "The service is shutting down (SHUTTING_DOWN); an operation still running then is answered so.",
  504: "The operation did not finish within its timeout.",
} as const;

export type ErrorStatus = keyof typeof ERROR_DESCRIPTIONS;

export function errorResponses(...statuses: ErrorStatus[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      { description: ERROR_DESCRIPTIONS[status], content: { "application/json": { schema: ErrorResponse } } },
    ]),
  );
}

/** A 200 answer with a description of its own in the document. */
export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}
