// Every error Deckhand raises. Each class names what failed and what to do about it; `code` is a
// stable machine-readable name (the service sends it as the `code` of an error body).
//
// The spec's section 7 classes come first, then Deckhand's own subclasses of ServiceError.

/**
 * Why an action on an element (or a read of the page) failed: a field the next layer switches on,
 * never a message text matched with a regex. In-page results carry the same names.
 */
export type FailureReason =
  /** Nothing matches the selector (now). */
  | "not-found"
  /** The selector leads to another element than the one chosen. */
  | "element-changed"
  /** The element cannot take input right now. */
  | "detached"
  | "not-visible"
  | "covered"
  | "disabled"
  | "read-only"
  /** The element cannot take this method at all. */
  | "not-editable"
  | "not-a-select"
  | "not-a-file-input"
  | "not-checkable"
  | "not-focusable"
  | "no-such-option"
  | "too-many-options"
  | "invalid-value"
  /** The method ran, and its effect is not there (the value did not land, the box is not checked). */
  | "not-applied"
  /** Selectors and frames. */
  | "invalid-selector"
  /** A strict locator's selector matches more than one element. */
  | "strict-mode-violation"
  | "shadow-root-missing"
  | "not-a-frame"
  | "frame-not-ready"
  /** The snapshot's ids no longer stand for elements (the page navigated or re-rendered). */
  | "stale-snapshot"
  /** The page or frame closed. */
  | "target-closed";

/** Options every Deckhand error takes: its cause and the reason code looks at. */
export interface ServiceErrorOptions {
  cause?: unknown;
  reason?: FailureReason;
}

export class ServiceError extends Error {
  readonly code: string = "SERVICE_ERROR";
  /** Why it failed, when code may decide what to do next from it (see FailureReason). */
  readonly reason: FailureReason | undefined;
  /**
   * The operation's call log when the message ends with it (every wait and retry, masked): set on
   * ServiceTimeoutError, ServiceClickError and ServiceElementNotFoundError (deadline.ts explain()).
   */
  declare callLog?: readonly string[];

  constructor(message: string, options?: ServiceErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.reason = options?.reason;
  }
}

/** Extracted data does not match the schema the caller gave. */
export class ZodSchemaValidationError extends ServiceError {
  override readonly code = "SCHEMA_VALIDATION";
  /** Path of the first mismatch, e.g. `items[3].price`. */
  readonly path: string;
  readonly issues: unknown;

  constructor(path: string, reason: string, issues?: unknown) {
    super(
      `The extracted data does not match the schema at ${path || "(root)"}: ${reason}. ` +
        "Make the instruction more specific, relax the schema, or try a stronger model.",
    );
    this.path = path;
    this.issues = issues;
  }
}

/** The page's DOM could not be read or processed (snapshot, settle, element resolution). */
export class ServiceDomProcessError extends ServiceError {
  override readonly code = "DOM_PROCESS";
}

/** JavaScript evaluated in the page threw, or its result could not be returned. */
export class ServiceEvalError extends ServiceError {
  override readonly code = "EVAL";
}

/** The iframe that holds the target element cannot be reached. */
export class ServiceIframeError extends ServiceError {
  override readonly code = "IFRAME";

  constructor(message: string, options?: ServiceErrorOptions) {
    super(message, { reason: "frame-not-ready", ...options });
  }
}

/** A selector step names an element that is not an iframe, or whose document is not available. */
export class ContentFrameNotFoundError extends ServiceError {
  override readonly code = "CONTENT_FRAME_NOT_FOUND";
  readonly selector: string;

  constructor(selector: string, detail?: string) {
    super(
      `No frame content for ${JSON.stringify(selector)}${detail ? `: ${detail}` : ""}. ` +
        "The element before a `>>` step (or an `iframe` step of an XPath) must be an <iframe> or <frame> whose document has loaded.",
      { reason: "not-a-frame" },
    );
    this.selector = selector;
  }
}

/** An XPath does not resolve to an element in the page or its frames. */
export class XPathResolutionError extends ServiceError {
  override readonly code = "XPATH_RESOLUTION";
  readonly xpath: string;

  constructor(xpath: string, detail?: string, reason: FailureReason = "not-found") {
    super(
      `XPath ${JSON.stringify(xpath)} does not resolve${detail ? `: ${detail}` : ""}. ` +
        "Check the path against the current page (it may have changed), or take a fresh snapshot.",
      { reason },
    );
    this.xpath = xpath;
  }
}

/** A selector step expects a shadow root on its host element and there is none. */
export class ServiceShadowRootMissingError extends ServiceError {
  override readonly code = "SHADOW_ROOT_MISSING";

  constructor(message: string, options?: ServiceErrorOptions) {
    super(message, { reason: "shadow-root-missing", ...options });
  }
}

/** The model's answer could not be used (after the bounded retry). */
export class LLMResponseError extends ServiceError {
  override readonly code = "LLM_RESPONSE";
  readonly operation: string;

  constructor(operation: string, reason: string, options?: { cause?: unknown }) {
    super(`The model's answer for ${operation} could not be used: ${reason}`, options);
    this.operation = operation;
  }
}

/** An operation needs a model and none is configured. */
export class MissingLLMConfigurationError extends ServiceError {
  override readonly code = "MISSING_LLM_CONFIGURATION";
  /**
   * The last sentences of the message: what to do, in the library's terms (options, environment
   * variables). An interface with other terms (the CLI's flags, the service's headers) replaces
   * them with its own (see withModelAdvice).
   */
  readonly howToFix: string | undefined;
  /** What is missing: the provider's key, or the address of a self-hosted server. */
  readonly missing: "key" | "baseURL" | undefined;
  /** The environment variables the provider's key is read from, comma-separated. */
  readonly keyEnv: string | undefined;

  constructor(
    message: string,
    options?: ServiceErrorOptions & {
      howToFix?: string;
      missing?: "key" | "baseURL";
      keyEnv?: string;
    },
  ) {
    // The inner error of a wrapped one (act's "needs a model") carries the advice.
    const inner = options?.cause instanceof MissingLLMConfigurationError ? options.cause : undefined;
    super(options?.howToFix ? `${message} ${options.howToFix}` : message, options);
    this.howToFix = options?.howToFix ?? inner?.howToFix;
    this.missing = options?.missing ?? inner?.missing;
    this.keyEnv = options?.keyEnv ?? inner?.keyEnv;
  }
}

/**
 * The message of a MissingLLMConfigurationError with its library advice replaced by `advice`
 * (the way to give a model in the interface at hand); other errors' messages as they are.
 */
export function withModelAdvice(
  error: unknown,
  advice: (missing: MissingLLMConfigurationError) => string,
): string {
  const message = error instanceof Error ? error.message : String(error);
  if (!(error instanceof MissingLLMConfigurationError) || !error.howToFix) return message;
  if (!message.endsWith(error.howToFix)) return message;
  return `${message.slice(0, message.length - error.howToFix.length)}${advice(error)}`;
}

/** The model (or its provider) cannot do what the operation needs. */
export class UnsupportedModelError extends ServiceError {
  override readonly code = "UNSUPPORTED_MODEL";
}

/** A model string is not of the form `provider/model`. */
export class InvalidAISDKModelFormatError extends ServiceError {
  override readonly code = "INVALID_MODEL_FORMAT";
  readonly modelName: string;

  constructor(modelName: string) {
    super(
      `Model ${JSON.stringify(modelName)} is not of the form "provider/model" (for example "openai/gpt-4.1-mini" ` +
        'or "anthropic/claude-sonnet-4-5"). Write the provider, a slash, then the model name.',
    );
    this.modelName = modelName;
  }
}

/** No element matches the selector. */
export class ServiceElementNotFoundError extends ServiceError {
  override readonly code = "ELEMENT_NOT_FOUND";
  readonly selector: string;

  constructor(selector: string, detail?: string, reason: FailureReason = "not-found") {
    super(
      `No element matches ${JSON.stringify(selector)}${detail ? ` ${detail}` : ""}. ` +
        "Check the selector against the current page; it may not have loaded yet or may have changed.",
      { reason },
    );
    this.selector = selector;
  }
}

/** An action (a click, typed text, a checked box) did not reach the element or did not take effect. */
export class ServiceClickError extends ServiceError {
  override readonly code = "CLICK";
  readonly selector: string;

  constructor(selector: string, explanation: string, reason: FailureReason = "not-applied", verb = "click") {
    super(`Could not ${verb} ${JSON.stringify(selector)}: ${explanation}`, { reason });
    this.selector = selector;
  }
}

/** The browser (or the remote session) could not be started. */
export class ServiceInitError extends ServiceError {
  override readonly code = "INIT";
}

/** A method was called before `init()` (or after `close()`). */
export class ServiceNotInitializedError extends ServiceError {
  override readonly code = "NOT_INITIALIZED";

  constructor(what: string) {
    super(`${what} was used before init(). Call \`await deckhand.init()\` first (and not after close()).`);
  }
}

/** A remote session id does not exist (or belongs to another API key). */
export class BrowserbaseSessionNotFoundError extends ServiceError {
  override readonly code = "SESSION_NOT_FOUND";
  readonly sessionId: string;

  constructor(sessionId: string) {
    super(
      `Session ${JSON.stringify(sessionId)} was not found on the service (it may have ended, expired, or belong to another API key). ` +
        "Start a new session by leaving out `sessionId`.",
    );
    this.sessionId = sessionId;
  }
}

/** The neutral name of {@link BrowserbaseSessionNotFoundError}. */
export const RemoteSessionNotFoundError = BrowserbaseSessionNotFoundError;
export type RemoteSessionNotFoundError = BrowserbaseSessionNotFoundError;

/** A required environment variable is not set. */
export class MissingEnvironmentVariableError extends ServiceError {
  override readonly code = "MISSING_ENVIRONMENT_VARIABLE";
  readonly variable: string;

  constructor(variable: string, purpose: string) {
    super(`${variable} is not set. ${purpose}`);
    this.variable = variable;
  }
}

/** The options given to the client are invalid. */
export class ServiceEnvironmentError extends ServiceError {
  override readonly code = "INVALID_OPTIONS";
  /** Dotted path of the offending option, e.g. `localBrowserLaunchOptions.port`. */
  readonly option: string;

  constructor(option: string, problem: string) {
    super(`Invalid option \`${option}\`: ${problem}`);
    this.option = option;
  }
}

// ---- Deckhand's own subclasses ----

/** An operation did not finish before its deadline. The page stays usable. */
export class ServiceTimeoutError extends ServiceError {
  override readonly code = "TIMEOUT";
  readonly operation: string;
  readonly timeoutMs: number;

  constructor(operation: string, timeoutMs: number, hint?: string) {
    super(
      `${operation} did not finish within ${timeoutMs} ms and was abandoned. ${hint ?? "Raise the `timeout` option if the page is slow."}`,
    );
    this.operation = operation;
    this.timeoutMs = timeoutMs;
  }
}

/** The browser went away (crashed, was killed, or was closed) while a call was pending. */
export class ServiceBrowserClosedError extends ServiceError {
  override readonly code = "BROWSER_CLOSED";
}

/** The page (tab) or frame a call was aimed at was closed or navigated away while the call ran. */
export class ServiceTargetClosedError extends ServiceError {
  override readonly code = "TARGET_CLOSED";

  constructor(message: string, options?: ServiceErrorOptions) {
    super(message, { reason: "target-closed", ...options });
  }
}

/** A navigation failed (DNS, refused connection, TLS, aborted) or timed out. */
export class ServiceNavigationError extends ServiceError {
  override readonly code = "NAVIGATION";
  readonly url: string;

  constructor(url: string, reason: string) {
    super(`Navigation to ${url} failed: ${reason}`);
    this.url = url;
  }
}

/** A call's arguments are invalid (wrong type, unknown option value). */
export class ServiceInvalidArgumentError extends ServiceError {
  override readonly code = "INVALID_ARGUMENT";
}

/** The operation was cancelled by its caller (an AbortSignal, or a client that went away). */
export class ServiceCancelledError extends ServiceError {
  override readonly code = "CANCELLED";
}

/** The Deckhand service answered a REMOTE call with an error. */
export class ServiceApiError extends ServiceError {
  override readonly code: string;
  readonly status: number;

  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}
