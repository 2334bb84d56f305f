// Tools for where the browser is: opening a URL, going back and forward, and the tabs.

import { z } from "zod";
import { ServiceInvalidArgumentError } from "../errors.ts";
import { pageLine, respond } from "./response.ts";
import { define } from "./tool.ts";

export const navigateTool = define({
  name: "navigate",
  title: "Open a URL in the current tab",
  description:
    "Opens a URL in the current tab and waits for it to load. Answers with the page's title and URL.",
  input: z.object({
    url: z
      .string()
      .min(1)
      .describe("The address to open: http or https (also data: and about:blank; file: where allowed)."),
  }),
  // Leaves the current page (what it held is not lost to its site), loads any site.
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  positional: ["url"],
  onPage: false,
  async run(dh, { url }) {
    const status = await dh.page.goto(url);
    return respond.text(`Opened ${await pageLine(dh)}${status ? ` (HTTP ${status})` : ""}.`, {
      ok: status === null || status < 400,
    });
  },
});

export const tabsTool = define({
  name: "tabs",
  title: "List, switch or close tabs",
  description:
    "Lists the open tabs (index, title, URL, which is current), makes another tab the current one, or closes one.",
  input: z.object({
    action: z.enum(["list", "switch", "close"]).default("list").describe("list, switch or close."),
    index: z.number().int().min(0).optional().describe("The tab's index from the list (switch and close)."),
  }),
  // Closing a tab loses its page; the tabs are this browser's, no site is reached.
  annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  positional: ["action", "index"],
  onPage: false,
  async run(dh, { action, index }) {
    const pages = dh.context.pages();
    if (action !== "list") {
      if (index === undefined || !pages[index]) {
        throw new ServiceInvalidArgumentError(
          `tabs ${action} needs the index of an open tab (0-${pages.length - 1}); list them with tabs list.`,
        );
      }
      if (action === "switch") await dh.context.setActivePage(pages[index]);
      else {
        if (pages.length === 1) throw new ServiceInvalidArgumentError("The last tab cannot be closed.");
        await pages[index].close();
      }
    }
    const active = dh.context.activePage();
    const list = await Promise.all(
      dh.context.pages().map(async (p, i) => ({
        index: i,
        title: await p.title().catch(() => ""),
        url: p.url(),
        current: p === active,
      })),
    );
    return respond.json(list, {
      text: list
        .map((t) => `${t.current ? "*" : " "} ${t.index}  ${t.title || "(no title)"}  ${t.url}`)
        .join("\n"),
    });
  },
});

export const backTool = define({
  name: "back",
  title: "Go back in the current tab",
  description: "Goes back one page in the current tab's history.",
  input: z.object({}),
  // The page it goes back to may be loaded again from its site.
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  positional: [],
  onPage: false,
  async run(dh) {
    await dh.page.goBack();
    return respond.text(`Back at ${await pageLine(dh)}.`);
  },
});

export const forwardTool = define({
  name: "forward",
  title: "Go forward in the current tab",
  description: "Goes forward one page in the current tab's history.",
  input: z.object({}),
  annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  positional: [],
  onPage: false,
  async run(dh) {
    await dh.page.goForward();
    return respond.text(`At ${await pageLine(dh)}.`);
  },
});
