// Every request, header and response schema of the service, for route handlers and the OpenAPI
// document alike.

export * from "./common.ts";
export { apiSchemas } from "./registry.ts";
export * from "./session-end.ts";
export * from "./session-operations.ts";
export * from "./session-replay.ts";
export * from "./session-start.ts";
export * from "./stream-events.ts";
