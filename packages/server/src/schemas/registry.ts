// The registry behind the OpenAPI document: named schemas become `components.schemas` entries and
// `$ref`s, and descriptions land in the generated JSON Schema. A private registry (rather than
// zod's global one, which `.describe()` writes to) keeps other libraries' schemas out of our
// document and keeps ours out of theirs.

import { z } from "zod";

export type ApiSchemaMeta = { id?: string; description?: string; [key: string]: unknown };

export const apiSchemas = z.registry<ApiSchemaMeta>();

/** Registers `schema` as the component `id` (request bodies get an `Input` suffix in the document). */
export function named<T extends z.ZodType>(id: string, schema: T, description?: string): T {
  const meta: ApiSchemaMeta = { ...apiSchemas.get(schema), id };
  if (description !== undefined) meta.description = description;
  apiSchemas.add(schema, meta);
  return schema;
}

/** Attaches a description to `schema` in the document. */
export function doc<T extends z.ZodType>(schema: T, description: string): T {
  apiSchemas.add(schema, { ...apiSchemas.get(schema), description });
  return schema;
}
