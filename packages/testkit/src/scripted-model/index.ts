// A scripted OpenAI-compatible model server for tests: real HTTP on 127.0.0.1, real provider code.

export { ScriptedComputerUseModel, startComputerUseModel } from "./computer-use-server.ts";
export type {
  AnthropicComputerTurn,
  ComputerUseHttpError,
  ComputerUseProvider,
  ComputerUseRequest,
  ComputerUseResponder,
  ComputerUseTurn,
  ComputerUseUsage,
  GeminiComputerTurn,
  OpenAIComputerTurn,
} from "./computer-use-types.ts";
export { match } from "./match.ts";
export {
  type ScriptedContentOptions,
  ScriptedContentReply,
  ScriptedHttpReply,
  ScriptedReply,
  type ScriptedToolCall,
  ScriptedToolCallsReply,
} from "./replies.ts";
export { ScriptedModel, type ScriptedModelOptions, startScriptedModel } from "./server.ts";
export {
  requestedOutputLimit,
  SLOPPY_TEXT_QUIRKS,
  SLOPPY_VALUE_QUIRKS,
  SloppyLayer,
  type SloppyOptions,
  type SloppyQuirk,
  type SloppyRecord,
  type SloppyServerQuirk,
  type SloppyText,
  type SloppyTextQuirk,
  type SloppyValueQuirk,
  seededRandom,
  sloppyTokens,
} from "./sloppy.ts";
export {
  DEFAULT_SCRIPTED_USAGE,
  type ScriptedAnswer,
  type ScriptedJson,
  type ScriptedMatcher,
  type ScriptedMessage,
  type ScriptedRequest,
  type ScriptedResponder,
  type ScriptedResponseFormat,
  type ScriptedRule,
  type ScriptedRuleOptions,
  type ScriptedTool,
  type ScriptedUsage,
} from "./types.ts";
