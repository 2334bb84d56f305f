// Computer-use mode: the provider's own computer-use tool drives the page (see docs/agent-cua.md).

export { COMPUTER_USE_MODELS, type CuaTool, computerUseTool, supportsComputerUse } from "./models.ts";
export { DEFAULT_CUA_MAX_STEPS, runComputerUse } from "./run.ts";
export type {
  CuaAction,
  CuaCallbacks,
  CuaLogger,
  CuaModel,
  CuaProvider,
  CuaRunContext,
  CuaRunResult,
  CuaSafetyCheck,
  CuaStep,
  CuaUsage,
} from "./types.ts";
