// Test support shared by the Deckhand packages.
export { type AuthProxy, type AuthProxyOptions, startAuthProxy } from "./auth-proxy.ts";
export { type ChildScript, startChildScript } from "./child-script.ts";
export { EXPLICIT_CASES, type ExplicitCase } from "./explicit-cases.ts";
export { EXPLICIT_HELD_OUT } from "./explicit-heldout.ts";
export {
  type ExplicitClient,
  type ExplicitObservation,
  type ExplicitVerdict,
  expectedIds,
  instructionOf,
  judgeExplicit,
  labelledExplicit,
  runExplicitCase,
} from "./explicit-run.ts";
export { beaconsOf, beaconsSince, EXPORT_PAGES, serveExportPages } from "./export-pages.ts";
export { type FixtureServer, startFixtureServer } from "./fixture-server.ts";
export type { FixtureRequest, RouteHandler } from "./fixture-site.ts";
export {
  type LargePageOptions,
  type ListProduct,
  largePageHtml,
  listProduct,
  longListHtml,
  productPageHtml,
} from "./generate.ts";
export { type HeldPage, holdPage } from "./held-page.ts";
export { type FixtureTls, fixtureTls, type HttpsFixtureServer, startHttpsServer } from "./https-server.ts";
export {
  type ChromeProcess,
  leftoverTempDirs,
  liveChromeProcesses,
  processesMentioning,
  waitForNoChrome,
} from "./leaks.ts";
export { fixturesDir, pagesDir, tlsDir } from "./paths.ts";
export {
  CHROMIUM_FOR_EXPORTS,
  type ExportedRun,
  type ExportedSpecsRun,
  runDeckhandScript,
  runPlaywrightSpec,
  runPlaywrightSpecs,
  type SpecResult,
  typeCheck,
} from "./run-exported.ts";
export * from "./scripted-model/index.ts";
export { allListeningSockets, type ListeningSocket, listeningSockets, processTree } from "./sockets.ts";
export { startXvfb, type VirtualDisplay, xvfbAvailable } from "./xvfb.ts";
