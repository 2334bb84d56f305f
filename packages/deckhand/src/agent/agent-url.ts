// Where the agent may send the page. Its model reads the pages it visits, and a page's text can
// talk it into anything, so its goto (DOM and hybrid tools, computer-use actions, and the replay of
// a stored run) obeys the rule every untrusted caller does (page-url.ts, the service's rule too):
// http, https, data: and about:blank. The machine's files and the browser's own pages are refused
// with a message the model reads as the tool's answer; a program's own page.goto is not limited.

import { ServiceInvalidArgumentError } from "../errors.ts";
import { checkPageUrl } from "../page-url.ts";

/** `url` as the browser is to load it, or a ServiceInvalidArgumentError saying why it may not. */
export function agentPageUrl(url: string): string {
  const check = checkPageUrl(url, { where: "the agent's page" });
  if (!check.ok) throw new ServiceInvalidArgumentError(`The agent cannot open this URL: ${check.problem}.`);
  return check.href;
}
