// The model of one call: the call's own `model`, else the session's `modelName`, with the caller's
// provider key from `x-model-api-key` put into it for this call only. The key lives in the model
// object handed to the library for the duration of the call, and nowhere else: the request log
// drops the header, and replay parameters are recorded from the body, which never carries it.

import {
  DEFAULT_MODEL_NAME,
  InvalidAISDKModelFormatError,
  legacyModelName,
  legacyModelWarning,
  type ModelConfiguration,
  parseModelName,
} from "deckhand";
import { ApiError } from "../errors.ts";
import { checkEgress, type EgressPolicy } from "../policy/egress.ts";
import { guardedFetch } from "../policy/pinned-http.ts";

/** The body's model as validated: a "provider/model" string or an object with at least modelName. */
export type RequestModel = string | ({ modelName: string } & Record<string, unknown>);

/**
 * The name as the library reads it: "provider/model", or a bare legacy name of a known family
 * mapped to its provider (`gpt-4.1-nano` -> `openai/gpt-4.1-nano`; `warn` gets the deprecation
 * notice). Anything else is a 400 naming `field`, with the library's code for this error
 * (InvalidAISDKModelFormatError), so that a REMOTE client raises the same class as a LOCAL one.
 */
export function checkModelName(name: string, field: string, warn?: (message: string) => void): string {
  const legacy = legacyModelName(name);
  if (legacy) {
    warn?.(`body field \`${field}\`: ${legacyModelWarning(name.trim(), legacy)}`);
    return legacy;
  }
  try {
    parseModelName(name.trim());
  } catch (error) {
    if (!(error instanceof InvalidAISDKModelFormatError)) throw error;
    throw new ApiError(
      400,
      "INVALID_MODEL_FORMAT",
      `Invalid request: body field \`${field}\`: ${JSON.stringify(name)} is not of the form "provider/model" ` +
        '(for example "openai/gpt-4.1-mini"), nor a bare model name of a known family (gpt-*, o1/o3/o4*, ' +
        "claude-*, gemini-*, cerebras-*, groq-*).",
    );
  }
  return name;
}

/** `requested` with its model name as the library reads it (checkModelName). */
export function canonicalModel(
  requested: RequestModel,
  field: string,
  warn?: (message: string) => void,
): RequestModel {
  if (typeof requested === "string") return checkModelName(requested, field, warn);
  const modelName = checkModelName(requested.modelName, `${field}.modelName`, warn);
  return modelName === requested.modelName ? requested : { ...requested, modelName };
}

/** The model configuration to pass to the library, or undefined for the instance's own. */
export function callModel(
  requested: RequestModel | undefined,
  sessionModel: string | undefined,
  modelApiKey: string | undefined,
  warn?: (message: string) => void,
  field = "options.model",
): ModelConfiguration | undefined {
  if (requested !== undefined) requested = canonicalModel(requested, field, warn);
  if (!modelApiKey) return requested;
  if (requested === undefined) return { modelName: sessionModel ?? DEFAULT_MODEL_NAME, apiKey: modelApiKey };
  if (typeof requested === "string") return { modelName: requested, apiKey: modelApiKey };
  // A key in the body's model object is the more specific of the two.
  return requested.apiKey ? requested : { ...requested, apiKey: modelApiKey };
}

/** "provider/model" of the model a call runs with (for prices). */
export function modelNameOf(model: ModelConfiguration | undefined, sessionModel: string | undefined): string {
  if (typeof model === "string") return model;
  if (model) return model.modelName;
  return sessionModel ?? DEFAULT_MODEL_NAME;
}

/** Where a call's model `baseURL` may lead (--model-base-url-hosts), and the port not to call. */
export interface ModelEgress {
  policy: EgressPolicy;
  ownPort(): number | undefined;
}

/**
 * A model the caller pointed at an address of its own (`baseURL`) gets a `fetch` that goes only
 * where the operator allows, to the address it checked, and fails without saying what answered
 * (policy/pinned-http.ts). Returns the model to run with, and that address for error messages.
 */
export async function guardModel(
  model: ModelConfiguration | undefined,
  egress: ModelEgress,
): Promise<{ model: ModelConfiguration | undefined; endpoint: string | undefined }> {
  if (typeof model !== "object") return { model, endpoint: undefined };
  // Only the service decides how a model is called.
  const { fetch: _ignored, ...rest } = model as Exclude<ModelConfiguration, string> & {
    fetch?: unknown;
  };
  const baseURL = rest.baseURL;
  if (typeof baseURL !== "string") return { model: rest, endpoint: undefined };
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new ApiError(
      400,
      "INVALID_REQUEST",
      "Invalid request: body field `options.model.baseURL`: it is not an absolute http(s) URL.",
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ApiError(
      400,
      "INVALID_REQUEST",
      "Invalid request: body field `options.model.baseURL`: only http:// and https:// model endpoints can be used.",
    );
  }
  // Refused before anything is sent; each request checks again (a name may resolve elsewhere later).
  const check = await checkEgress(url, egress.policy, egress.ownPort());
  if (!check.ok) {
    throw new ApiError(
      400,
      "INVALID_REQUEST",
      `Invalid request: body field \`options.model.baseURL\`: ${check.problem}. The operator chooses where ` +
        "model requests may go (--model-base-url-hosts).",
    );
  }
  const endpoint = `${url.origin}${url.pathname}`;
  return {
    model: { ...rest, fetch: guardedFetch(egress.policy, egress.ownPort, endpoint) } as ModelConfiguration,
    endpoint,
  };
}
