// What a CDP proxy client may call, and with which parameters: an allow-list. A command that is
// not listed here is refused, so that a command nobody thought about (a new one in a later
// Chrome, an obscure one in an old domain) never reaches the browser.
//
// Two kinds of session: the browser target (the client's connection itself, and sessions it opens
// with Target.attachToBrowserTarget) and target sessions (the pages, frames and workers of the
// session's browser context it attached to). Commands of a target session act on that target
// only, so most of the page-level protocol is allowed there as it is; commands of the browser
// target act on the whole browser, so only the few that can be held to the session are: those
// that name a browser context are bound to the session's, those that name a target or a window
// must name one of the session's.
//
// Wherever a parameter carries a URL, a file path or a download directory, it is checked or
// rewritten the same way on every session kind: URLs by the page URL policy (policy/page-url.ts),
// file paths must lie in the session's own directory, and download directories are replaced by it.

import { realpath } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import { checkPageUrl } from "../policy/page-url.ts";

export type Json = Record<string, unknown>;

/** What the policy needs to know of the session a client is held to. */
export interface SessionScope {
  /** The session's browser context as the browser names it. */
  readonly contextId: string;
  /** Whether that is the browser's default context (a browser given by cdpUrl): ids then go unnamed. */
  readonly isDefaultContext: boolean;
  /** The directory the session's downloads go to (and the only place files may be taken from). */
  readonly downloadDir: string;
  ownsTarget(targetId: unknown): Promise<boolean>;
  ownsWindow(windowId: unknown): Promise<boolean>;
  /** Why no other tab may be opened now (the session's tab limit), or undefined. */
  tabLimitProblem(): Promise<string | undefined>;
}

export type SessionKind = "browser" | "target";

export type Verdict = { ok: true; params: Json } | { ok: false; code: number; message: string };

/** CDP's codes for "not allowed" (server error) and for an unknown method. */
export const REFUSED = -32000;
const METHOD_NOT_FOUND = -32601;

/** A check of a command's parameters: a problem, or undefined (it may rewrite `params`). */
type Check = (params: Json, scope: SessionScope, method: string) => Promise<string | undefined>;

interface Rule {
  on: SessionKind | "any";
  checks: readonly Check[];
}

// ---------- parameter checks ----------

function url(name: string, optional = false): Check {
  return async (params) => {
    if (params[name] === undefined && optional) return undefined;
    const check = checkPageUrl(params[name]);
    if (!check.ok) return `\`${name}\`: ${check.problem}`;
    params[name] = check.href;
    return undefined;
  };
}

/** `browserContextId` must be the session's; filled in when absent (and left out for a default context). */
function context(name = "browserContextId"): Check {
  return async (params, scope) => {
    const given = params[name];
    if (given !== undefined && given !== scope.contextId) {
      return `\`${name}\` names a browser context that is not this session's (omit it: the session's is used)`;
    }
    if (scope.isDefaultContext) delete params[name];
    else params[name] = scope.contextId;
    return undefined;
  };
}

function target(name = "targetId", optional = false): Check {
  return async (params, scope) => {
    if (params[name] === undefined && optional) return undefined;
    return (await scope.ownsTarget(params[name])) ? undefined : "No target with given id found";
  };
}

function windowOf(name = "windowId"): Check {
  return async (params, scope) =>
    (await scope.ownsWindow(params[name])) ? undefined : `\`${name}\` is not a window of this session`;
}

/** Downloads go to the session's directory, whatever directory the client named. */
const downloadPath: Check = async (params, scope) => {
  if (params.behavior === "allow" || params.behavior === "allowAndName" || params.downloadPath !== undefined)
    params.downloadPath = scope.downloadDir;
  return undefined;
};

async function insideDir(path: unknown, dir: string): Promise<boolean> {
  if (typeof path !== "string" || !isAbsolute(path)) return false;
  let real: string;
  try {
    // Symbolic links are followed: a link in the directory must not lead out of it.
    real = await realpath(resolve(path));
  } catch {
    return false;
  }
  const realDir = await realpath(dir).catch(() => dir);
  const rel = relative(realDir, real);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/** File paths (read by the browser and handed to the page) must be files of the session's directory. */
function files(read: (params: Json) => unknown): Check {
  return async (params, scope) => {
    const list = read(params);
    if (list === undefined) return undefined;
    if (!Array.isArray(list)) return "files must be a list of paths";
    for (const path of list) {
      if (!(await insideDir(path, scope.downloadDir))) {
        return (
          `${JSON.stringify(String(path).slice(0, 200))} is not a file of this session: only files the session ` +
          "downloaded can be used (send a file's content through the page instead)"
        );
      }
    }
    return undefined;
  };
}

const flattenOnly: Check = async (params) =>
  params.flatten === true ? undefined : "Only flatten: true sessions are available through the CDP proxy";

const tabLimit: Check = (_params, scope) => scope.tabLimitProblem();

/** Largest side, in pixels, of a viewport, screen or window a client may ask for (as at session start). */
export const MAX_SIDE = 4096;
/** Largest device scale factor or screenshot scale a client may ask for. */
export const MAX_SCALE = 4;

/**
 * Sizes the browser would allocate for: a viewport of 100,000 x 100,000 pixels, or a scale of 50,
 * makes the renderer (and a screenshot) take gigabytes in a process other tenants' pages may share.
 * `pick` finds the object holding the fields (the params themselves, or a nested one).
 */
function sizes(pick: (params: Json) => unknown = (p) => p): Check {
  return async (params) => {
    const box = pick(params);
    if (box === undefined || box === null || typeof box !== "object") return undefined;
    const fields = box as Record<string, unknown>;
    for (const name of ["width", "height", "screenWidth", "screenHeight"]) {
      const value = fields[name];
      if (value !== undefined && !(typeof value === "number" && value >= 0 && value <= MAX_SIDE))
        return `\`${name}\` must be a number from 0 to ${MAX_SIDE} pixels`;
    }
    for (const name of ["deviceScaleFactor", "scale"]) {
      const value = fields[name];
      if (value !== undefined && !(typeof value === "number" && value >= 0 && value <= MAX_SCALE))
        return `\`${name}\` must be a number from 0 to ${MAX_SCALE}`;
    }
    return undefined;
  };
}

const allow: Rule = { on: "target", checks: [] };

// ---------- the list ----------

/** Target-session domains whose every listed command acts only on the target it is sent to. */
const TARGET_COMMANDS: Record<string, readonly string[]> = {
  Accessibility: [
    "disable",
    "enable",
    "getPartialAXTree",
    "getFullAXTree",
    "getRootAXNode",
    "getAXNodeAndAncestors",
    "getChildAXNodes",
    "queryAXTree",
  ],
  Animation: [
    "disable",
    "enable",
    "getCurrentTime",
    "getPlaybackRate",
    "releaseAnimations",
    "resolveAnimation",
    "seekAnimations",
    "setPaused",
    "setPlaybackRate",
    "setTiming",
  ],
  Audits: ["getEncodedResponse", "disable", "enable", "checkFormsIssues"],
  Autofill: ["trigger", "setAddresses", "disable", "enable"],
  CSS: [
    "addRule",
    "collectClassNames",
    "createStyleSheet",
    "disable",
    "enable",
    "forcePseudoState",
    "forceStartingStyle",
    "forcePositionTryOption",
    "getBackgroundColors",
    "getComputedStyleForNode",
    "resolveValues",
    "getLonghandProperties",
    "getInlineStylesForNode",
    "getAnimatedStylesForNode",
    "getMatchedStylesForNode",
    "getEnvironmentVariables",
    "getMediaQueries",
    "getPlatformFontsForNode",
    "getStyleSheetText",
    "getLayersForNode",
    "getLocationForSelector",
    "trackComputedStyleUpdatesForNode",
    "trackComputedStyleUpdates",
    "takeComputedStyleUpdates",
    "setEffectivePropertyValueForNode",
    "setPropertyRulePropertyName",
    "setKeyframeKey",
    "setMediaText",
    "setContainerQueryText",
    "setContainerQueryConditionText",
    "setSupportsText",
    "setNavigationText",
    "setScopeText",
    "setRuleSelector",
    "setStyleSheetText",
    "setStyleTexts",
    "startRuleUsageTracking",
    "stopRuleUsageTracking",
    "takeCoverageDelta",
    "setLocalFontsEnabled",
  ],
  CacheStorage: [
    "deleteCache",
    "deleteEntry",
    "requestCacheNames",
    "requestCachedResponse",
    "requestEntries",
  ],
  Console: ["clearMessages", "disable", "enable"],
  DOM: [
    "collectClassNamesFromSubtree",
    "copyTo",
    "describeNode",
    "scrollIntoViewIfNeeded",
    "disable",
    "discardSearchResults",
    "enable",
    "focus",
    "getAttributes",
    "getBoxModel",
    "getContentQuads",
    "getDocument",
    "getFlattenedDocument",
    "getNodesForSubtreeByStyle",
    "getNodeForLocation",
    "getOuterHTML",
    "getRelayoutBoundary",
    "getSearchResults",
    "hideHighlight",
    "highlightNode",
    "highlightRect",
    "markUndoableState",
    "moveTo",
    "performSearch",
    "pushNodeByPathToFrontend",
    "pushNodesByBackendIdsToFrontend",
    "querySelector",
    "querySelectorAll",
    "getTopLayerElements",
    "getElementByRelation",
    "redo",
    "removeAttribute",
    "removeNode",
    "requestChildNodes",
    "requestNode",
    "resolveNode",
    "setAttributeValue",
    "setAttributesAsText",
    "setNodeStackTracesEnabled",
    "getNodeStackTraces",
    "getFileInfo",
    "getDetachedDomNodes",
    "setInspectedNode",
    "setNodeName",
    "setNodeValue",
    "setOuterHTML",
    "undo",
    "getFrameOwner",
    "getContainerForNode",
    "getQueryingDescendantsForContainer",
    "getAnchorElement",
    "forceShowPopover",
  ],
  DOMDebugger: [
    "getEventListeners",
    "removeDOMBreakpoint",
    "removeEventListenerBreakpoint",
    "removeInstrumentationBreakpoint",
    "removeXHRBreakpoint",
    "setBreakOnCSPViolation",
    "setDOMBreakpoint",
    "setEventListenerBreakpoint",
    "setInstrumentationBreakpoint",
    "setXHRBreakpoint",
  ],
  DOMSnapshot: ["disable", "enable", "getSnapshot", "captureSnapshot"],
  DOMStorage: [
    "clear",
    "disable",
    "enable",
    "getDOMStorageItems",
    "removeDOMStorageItem",
    "setDOMStorageItem",
  ],
  Debugger: [
    "continueToLocation",
    "disable",
    "enable",
    "evaluateOnCallFrame",
    "getPossibleBreakpoints",
    "getScriptSource",
    "disassembleWasmModule",
    "nextWasmDisassemblyChunk",
    "getWasmBytecode",
    "getStackTrace",
    "pause",
    "pauseOnAsyncCall",
    "removeBreakpoint",
    "restartFrame",
    "resume",
    "searchInContent",
    "setAsyncCallStackDepth",
    "setBlackboxExecutionContexts",
    "setBlackboxPatterns",
    "setBlackboxedRanges",
    "setBreakpoint",
    "setInstrumentationBreakpoint",
    "setBreakpointByUrl",
    "setBreakpointOnFunctionCall",
    "setBreakpointsActive",
    "setPauseOnExceptions",
    "setReturnValue",
    "setScriptSource",
    "setSkipAllPauses",
    "setVariableValue",
    "stepInto",
    "stepOut",
    "stepOver",
  ],
  DeviceAccess: ["enable", "disable", "selectPrompt", "cancelPrompt"],
  DeviceOrientation: ["clearDeviceOrientationOverride", "setDeviceOrientationOverride"],
  // Not addScreen, updateScreen, removeScreen, setPrimaryScreen: the screens are the whole browser's.
  Emulation: [
    "canEmulate",
    "clearDeviceMetricsOverride",
    "clearGeolocationOverride",
    "resetPageScaleFactor",
    "setFocusEmulationEnabled",
    "setAutoDarkModeOverride",
    "setCPUThrottlingRate",
    "setDefaultBackgroundColorOverride",
    "setSafeAreaInsetsOverride",
    "setVirtualKeyboardGeometryOverride",
    "setDeviceMetricsOverride",
    "setDevicePostureOverride",
    "clearDevicePostureOverride",
    "setDisplayFeaturesOverride",
    "clearDisplayFeaturesOverride",
    "setScrollbarsHidden",
    "setDocumentCookieDisabled",
    "setEmitTouchEventsForMouse",
    "setEmulatedMedia",
    "setEmulatedVisionDeficiency",
    "setEmulatedOSTextScale",
    "setGeolocationOverride",
    "getOverriddenSensorInformation",
    "setSensorOverrideEnabled",
    "setSensorOverrideReadings",
    "setPressureSourceOverrideEnabled",
    "setPressureStateOverride",
    "setIdleOverride",
    "clearIdleOverride",
    "setNavigatorOverrides",
    "setPageScaleFactor",
    "setScriptExecutionDisabled",
    "setTouchEmulationEnabled",
    "setVirtualTimePolicy",
    "setLocaleOverride",
    "setTimezoneOverride",
    "setVisibleSize",
    "setDisabledImageTypes",
    "setDataSaverOverride",
    "setHardwareConcurrencyOverride",
    "setCPUPerformanceOverride",
    "setUserAgentOverride",
    "setAutomationOverride",
    "setSmallViewportHeightDifferenceOverride",
    "getScreenInfos",
  ],
  EventBreakpoints: ["setInstrumentationBreakpoint", "removeInstrumentationBreakpoint", "disable"],
  FedCm: [
    "enable",
    "disable",
    "selectAccount",
    "clickDialogButton",
    "openUrl",
    "dismissDialog",
    "resetCooldown",
  ],
  // Fetch.continueRequest has its own rule (it may rewrite the request's URL).
  Fetch: [
    "disable",
    "enable",
    "failRequest",
    "fulfillRequest",
    "continueWithAuth",
    "continueResponse",
    "getResponseBody",
    "takeResponseBodyAsStream",
  ],
  FindInPage: ["findFirst", "findNext", "findPrev", "stop"],
  HeadlessExperimental: ["beginFrame", "disable", "enable"],
  HeapProfiler: [
    "addInspectedHeapObject",
    "collectGarbage",
    "disable",
    "enable",
    "getHeapObjectId",
    "getObjectByHeapObjectId",
    "getSamplingProfile",
    "startSampling",
    "startTrackingHeapObjects",
    "stopSampling",
    "stopTrackingHeapObjects",
    "takeHeapSnapshot",
  ],
  IO: ["close", "read", "resolveBlob"],
  IndexedDB: [
    "clearObjectStore",
    "deleteDatabase",
    "deleteObjectStoreEntries",
    "disable",
    "enable",
    "requestData",
    "getMetadata",
    "requestDatabase",
    "requestDatabaseNames",
  ],
  // Input.dispatchDragEvent has its own rule (it may carry file paths).
  Input: [
    "dispatchKeyEvent",
    "insertText",
    "imeSetComposition",
    "dispatchMouseEvent",
    "dispatchTouchEvent",
    "cancelDragging",
    "emulateTouchFromMouseEvent",
    "setIgnoreInputEvents",
    "setInterceptDrags",
    "synthesizePinchGesture",
    "synthesizeScrollGesture",
    "synthesizeTapGesture",
  ],
  Inspector: ["disable", "enable"],
  LayerTree: [
    "compositingReasons",
    "disable",
    "enable",
    "loadSnapshot",
    "makeSnapshot",
    "profileSnapshot",
    "releaseSnapshot",
    "replaySnapshot",
    "snapshotCommandLog",
  ],
  Log: ["clear", "disable", "enable", "startViolationsReport", "stopViolationsReport"],
  Media: ["enable", "disable"],
  // The renderer's own; not the browser-wide sampling profiles or pressure signals.
  Memory: [
    "getDOMCounters",
    "getDOMCountersForLeakDetection",
    "prepareForLeakDetection",
    "forciblyPurgeJavaScriptMemory",
    "startSampling",
    "stopSampling",
    "getSamplingProfile",
  ],
  // Network.loadNetworkResource has its own rule (it fetches a URL); not setCookieControls (global).
  Network: [
    "canClearBrowserCache",
    "canClearBrowserCookies",
    "canEmulateNetworkConditions",
    "clearBrowserCache",
    "clearBrowserCookies",
    "deleteCookies",
    "disable",
    "emulateNetworkConditions",
    "emulateNetworkConditionsByRule",
    "overrideNetworkState",
    "enable",
    "configureDurableMessages",
    "getAllCookies",
    "getCertificate",
    "getCookies",
    "getResponseBody",
    "getRequestPostData",
    "replayXHR",
    "searchInResponseBody",
    "setBlockedURLs",
    "setBypassServiceWorker",
    "setCacheDisabled",
    "setCookie",
    "setCookies",
    "setExtraHTTPHeaders",
    "setAttachDebugStack",
    "setUserAgentOverride",
    "streamResourceContent",
    "getSecurityIsolationStatus",
    "enableReportingApi",
    "fetchSchemefulSite",
  ],
  Overlay: [
    "disable",
    "enable",
    "getHighlightObjectForTest",
    "getGridHighlightObjectsForTest",
    "getSourceOrderHighlightObjectForTest",
    "hideHighlight",
    "highlightFrame",
    "highlightNode",
    "highlightQuad",
    "highlightRect",
    "highlightSourceOrder",
    "setInspectMode",
    "setShowAdHighlights",
    "setPausedInDebuggerMessage",
    "setShowDebugBorders",
    "setShowFPSCounter",
    "setShowGridOverlays",
    "setShowFlexOverlays",
    "setShowScrollSnapOverlays",
    "setShowContainerQueryOverlays",
    "setShowPaintRects",
    "setShowLayoutShiftRegions",
    "setShowScrollBottleneckRects",
    "setShowHitTestBorders",
    "setShowWebVitals",
    "setShowViewportSizeOnResize",
    "setShowHinge",
    "setShowIsolatedElements",
    "setShowWindowControlsOverlay",
  ],
  // Page.navigate and setDownloadBehavior have their own rules; not crash (nothing needs it), nor
  // setSPCTransactionMode / setRPHRegistrationMode (the whole browser's).
  Page: [
    "addScriptToEvaluateOnLoad",
    "addScriptToEvaluateOnNewDocument",
    "bringToFront",
    "captureScreenshot",
    "captureSnapshot",
    "clearDeviceMetricsOverride",
    "clearDeviceOrientationOverride",
    "clearGeolocationOverride",
    "createIsolatedWorld",
    "deleteCookie",
    "disable",
    "enable",
    "getAppManifest",
    "getInstallabilityErrors",
    "getManifestIcons",
    "getAppId",
    "getAdScriptAncestry",
    "getFrameTree",
    "getLayoutMetrics",
    "getNavigationHistory",
    "resetNavigationHistory",
    "getResourceContent",
    "getResourceTree",
    "handleJavaScriptDialog",
    "navigateToHistoryEntry",
    "printToPDF",
    "reload",
    "removeScriptToEvaluateOnLoad",
    "removeScriptToEvaluateOnNewDocument",
    "screencastFrameAck",
    "searchInResource",
    "setAdBlockingEnabled",
    "setBypassCSP",
    "getPermissionsPolicyState",
    "getOriginTrials",
    "setDeviceMetricsOverride",
    "setDeviceOrientationOverride",
    "setFontFamilies",
    "setFontSizes",
    "setDocumentContent",
    "setGeolocationOverride",
    "setLifecycleEventsEnabled",
    "setTouchEmulationEnabled",
    "startScreencast",
    "startScreenRecording",
    "stopScreenRecording",
    "stopLoading",
    "close",
    "setWebLifecycleState",
    "stopScreencast",
    "produceCompilationCache",
    "addCompilationCache",
    "clearCompilationCache",
    "generateTestReport",
    "waitForDebugger",
    "setInterceptFileChooserDialog",
    "setPrerenderingAllowed",
    "getAnnotatedPageContent",
  ],
  Performance: ["disable", "enable", "setTimeDomain", "getMetrics"],
  PerformanceTimeline: ["enable"],
  Preload: ["enable", "disable"],
  Profiler: [
    "disable",
    "enable",
    "getBestEffortCoverage",
    "setSamplingInterval",
    "start",
    "startPreciseCoverage",
    "stop",
    "stopPreciseCoverage",
    "takePreciseCoverage",
  ],
  Runtime: [
    "awaitPromise",
    "callFunctionOn",
    "compileScript",
    "disable",
    "discardConsoleEntries",
    "enable",
    "evaluate",
    "getIsolateId",
    "getHeapUsage",
    "getProperties",
    "globalLexicalScopeNames",
    "queryObjects",
    "releaseObject",
    "releaseObjectGroup",
    "runIfWaitingForDebugger",
    "runScript",
    "setAsyncCallStackDepth",
    "setCustomObjectFormatterEnabled",
    "setMaxCallStackSizeToCapture",
    "terminateExecution",
    "addBinding",
    "removeBinding",
    "getExceptionDetails",
  ],
  Schema: ["getDomains"],
  // Not setIgnoreCertificateErrors: it is not limited to one context.
  Security: ["disable", "enable", "handleCertificateError", "setOverrideCertificateErrors"],
  ServiceWorker: [
    "deliverPushMessage",
    "disable",
    "dispatchSyncEvent",
    "dispatchPeriodicSyncEvent",
    "enable",
    "setForceUpdateOnPageLoad",
    "skipWaiting",
    "startWorker",
    "stopAllWorkers",
    "stopWorker",
    "unregister",
    "updateRegistration",
  ],
  // The page's own storage partition (cookies have their own rule below).
  Storage: [
    "getStorageKeyForFrame",
    "getStorageKey",
    "clearDataForOrigin",
    "clearDataForStorageKey",
    "getUsageAndQuota",
    "trackCacheStorageForOrigin",
    "trackCacheStorageForStorageKey",
    "trackIndexedDBForOrigin",
    "trackIndexedDBForStorageKey",
    "untrackCacheStorageForOrigin",
    "untrackCacheStorageForStorageKey",
    "untrackIndexedDBForOrigin",
    "untrackIndexedDBForStorageKey",
  ],
  WebAudio: ["enable", "disable", "getRealtimeData"],
  WebAuthn: [
    "enable",
    "disable",
    "addVirtualAuthenticator",
    "setResponseOverrideBits",
    "removeVirtualAuthenticator",
    "addCredential",
    "getCredential",
    "getCredentials",
    "removeCredential",
    "clearCredentials",
    "setUserVerified",
    "setAutomaticPresenceSimulation",
    "setCredentialProperties",
  ],
};

/** Commands with a rule of their own, on whichever session kind they name. */
const SPECIAL: Record<string, Rule> = {
  // Where a URL enters.
  "Page.navigate": { on: "target", checks: [url("url")] },
  "Target.createTarget": { on: "any", checks: [url("url"), context(), tabLimit] },
  "Fetch.continueRequest": { on: "target", checks: [url("url", true)] },
  "Network.loadNetworkResource": { on: "target", checks: [url("url")] },
  // Where a file path enters (the browser reads the file and gives it to the page).
  "DOM.setFileInputFiles": { on: "target", checks: [files((p) => p.files)] },
  "Input.dispatchDragEvent": {
    on: "target",
    checks: [files((p) => (p.data as { files?: unknown } | undefined)?.files)],
  },
  // Where downloads go.
  "Page.setDownloadBehavior": { on: "target", checks: [downloadPath] },
  "Browser.setDownloadBehavior": { on: "any", checks: [context(), downloadPath] },
  "Browser.cancelDownload": { on: "any", checks: [context()] },
  // What names a browser context.
  "Browser.grantPermissions": { on: "any", checks: [context()] },
  "Browser.resetPermissions": { on: "any", checks: [context()] },
  "Browser.setPermission": { on: "any", checks: [context()] },
  "Storage.getCookies": { on: "any", checks: [context()] },
  "Storage.setCookies": { on: "any", checks: [context()] },
  "Storage.clearCookies": { on: "any", checks: [context()] },
  // What names a window.
  "Browser.getWindowForTarget": { on: "any", checks: [target("targetId", true)] },
  "Browser.getWindowBounds": { on: "any", checks: [windowOf()] },
  "Browser.setWindowBounds": { on: "any", checks: [windowOf(), sizes((p) => p.bounds)] },
  "Browser.setContentsSize": { on: "any", checks: [windowOf(), sizes()] },
  // What the browser allocates memory for.
  "Emulation.setDeviceMetricsOverride": { on: "target", checks: [sizes()] },
  "Emulation.setVisibleSize": { on: "target", checks: [sizes()] },
  "Page.captureScreenshot": { on: "target", checks: [sizes((p) => p.clip)] },
  // What names a target.
  "Target.attachToTarget": { on: "any", checks: [flattenOnly, target()] },
  "Target.activateTarget": { on: "any", checks: [target()] },
  "Target.closeTarget": { on: "any", checks: [target()] },
  "Target.autoAttachRelated": { on: "any", checks: [target()] },
  "Target.getTargetInfo": { on: "any", checks: [target("targetId", true)] },
  // Answered or filtered by the proxy (isolation.ts): only the session's targets show.
  "Target.getBrowserContexts": { on: "any", checks: [] },
  "Target.getTargets": { on: "any", checks: [] },
  "Target.setAutoAttach": { on: "any", checks: [] },
  "Target.setDiscoverTargets": { on: "any", checks: [] },
  "Target.attachToBrowserTarget": { on: "any", checks: [] },
  // Detaching names the client's own session (checked by isolation.ts, which knows them).
  "Target.detachFromTarget": { on: "any", checks: [] },
  "Browser.getVersion": { on: "any", checks: [] },
};

const RULES = new Map<string, Rule>();
for (const [domain, methods] of Object.entries(TARGET_COMMANDS)) {
  for (const method of methods) RULES.set(`${domain}.${method}`, allow);
}
for (const [method, rule] of Object.entries(SPECIAL)) RULES.set(method, rule);

/** Every method a client may call (for the documentation and its test). */
export function allowedMethods(): { method: string; on: SessionKind | "any" }[] {
  return [...RULES]
    .map(([method, rule]) => ({ method, on: rule.on }))
    .sort((a, b) => a.method.localeCompare(b.method));
}

/**
 * Whether `method` may go to a session of `kind` as the client wrote it: it is allowed there and
 * none of its parameters is checked, so the proxy passes the message on without parsing it.
 */
export function passesUnchecked(method: string, kind: SessionKind): boolean {
  const rule = RULES.get(method);
  return rule !== undefined && rule.checks.length === 0 && (rule.on === "any" || rule.on === kind);
}

/**
 * Whether `method` may be sent on a session of `kind` with `params`, and with which parameters
 * (bound to the session's context and directory).
 */
export async function checkCommand(
  method: string,
  params: Json,
  kind: SessionKind,
  scope: SessionScope,
): Promise<Verdict> {
  const rule = RULES.get(method);
  if (!rule) {
    return {
      ok: false,
      code: METHOD_NOT_FOUND,
      message:
        `${method} is not available through the session's CDP proxy: it allows only commands that stay within ` +
        "the session (see the service's documentation of the CDP proxy).",
    };
  }
  if (rule.on !== "any" && rule.on !== kind) {
    return {
      ok: false,
      code: REFUSED,
      message:
        kind === "browser"
          ? `${method} is not available on the browser target through the session's CDP proxy (it would act on ` +
            "the whole browser). Send it to a page's session."
          : `${method} is only available on the browser target.`,
    };
  }
  const checked: Json = { ...params };
  for (const check of rule.checks) {
    const problem = await check(checked, scope, method);
    if (problem !== undefined) return { ok: false, code: REFUSED, message: `${method}: ${problem}` };
  }
  return { ok: true, params: checked };
}
