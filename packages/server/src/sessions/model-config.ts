// The model of one call: the call's own `model`, else the session's `modelName`, with the caller's
// provider key from `x-model-api-key` put into it for this call only. The key lives in the model
// object handed to the library for the duration of the call, and nowhere else: the request log
// drops the header, and replay parameters are recorded from the body, which never carries it.

import type { ModelConfiguration } from "deckhand";
import { ApiError } from "../errors.ts";
import { checkEgress, type EgressPolicy } from "../policy/egress.ts";
import { guardedFetch } from "../policy/pinned-http.ts";

/** The library's model when neither the call nor the session names one. */
export const LIBRARY_DEFAULT_MODEL = "openai/gpt-4.1-mini";

/** The body's model as validated: a "provider/model" string or an object with at least modelName. */
export type RequestModel = string | ({ modelName: string } & Record<string, unknown>);

/**
 * 400 naming `field` unless `name` is "provider/model". Its code is the library's for this error
 * (InvalidAISDKModelFormatError), so that a REMOTE client raises the same class as a LOCAL one.
 */
export function checkModelName(name: string, field: string): void {
  const slash = name.indexOf("/");
  if (slash <= 0 || slash === name.length - 1 || /\s/.test(name.slice(0, slash))) {
    throw new ApiError(
      400,
      "INVALID_MODEL_FORMAT",
      `Invalid request: body field \`${field}\`: ${JSON.stringify(name)} is not of the form "provider/model" ` +
        '(for example "openai/gpt-4.1-mini").',
    );
  }
}

/** The model configuration to pass to the library, or undefined for the instance's own. */
export function callModel(
  requested: RequestModel | undefined,
  sessionModel: string | undefined,
  modelApiKey: string | undefined,
): ModelConfiguration | undefined {
  if (requested !== undefined) {
    checkModelName(typeof requested === "string" ? requested : requested.modelName, "options.model");
  }
  if (!modelApiKey) return requested;
  if (requested === undefined)
    return { modelName: sessionModel ?? LIBRARY_DEFAULT_MODEL, apiKey: modelApiKey };
  if (typeof requested === "string") return { modelName: requested, apiKey: modelApiKey };
  // A key in the body's model object is the more specific of the two.
  return requested.apiKey ? requested : { ...requested, apiKey: modelApiKey };
}

/** "provider/model" of the model a call runs with (for prices). */
export function modelNameOf(model: ModelConfiguration | undefined, sessionModel: string | undefined): string {
  if (typeof model === "string") return model;
  if (model) return model.modelName;
  return sessionModel ?? LIBRARY_DEFAULT_MODEL;
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
