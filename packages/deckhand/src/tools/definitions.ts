// Every tool, in the order they are listed. The `deckhand` CLI's commands, the MCP servers' tools
// and the README's tool list are all generated from TOOLS, so they cannot drift apart. A tool is
// declared once, in the file of its category (tool.ts says what a tool is).

import { agentTool } from "./agent.ts";
import { exportTool } from "./export.ts";
import { actTool } from "./input.ts";
import { backTool, forwardTool, navigateTool, tabsTool } from "./pages.ts";
import { extractTool, observeTool, screenshotTool, textTool } from "./reading.ts";
import type { ToolDefinition } from "./tool.ts";

export { clipToTokens, DEFAULT_TEXT_TOKENS } from "./reading.ts";
export type { ToolAnnotations, ToolDefinition, ToolOutput, ToolResult } from "./tool.ts";

export const TOOLS: readonly ToolDefinition[] = [
  navigateTool,
  actTool,
  extractTool,
  observeTool,
  textTool,
  screenshotTool,
  tabsTool,
  backTool,
  forwardTool,
  agentTool,
  exportTool,
] as unknown as readonly ToolDefinition[];

/** The tool called `name`, or undefined. */
export function toolNamed(name: string): ToolDefinition | undefined {
  return TOOLS.find((t) => t.name === name);
}
