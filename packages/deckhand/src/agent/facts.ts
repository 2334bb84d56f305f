// What a replayed step checks its element by, with no model: the role and accessible name the
// element had when the step was recorded. A stored XPath that leads to something else (or
// nothing) is healed by finding the one element of the page with that role and name.

import type { Page } from "../browser/page.ts";
import type { Deadline } from "../deadline.ts";
import type { SecretRedactor } from "../log.ts";
import { describeElement } from "../snapshot/describe.ts";
import { takeSnapshot } from "../snapshot/snapshot.ts";

export interface ElementIdentity {
  role: string;
  /** Masked: a variable's value shows as its %name%. */
  name: string;
}

/**
 * Role and name of what `selector` leads to now; undefined when nothing (within `timeoutMs`, a
 * limit of its own inside `deadline`: an element that is not there soon is not the one recorded).
 */
export async function identityAt(
  page: Page,
  selector: string,
  redactor: SecretRedactor,
  deadline: Deadline,
  timeoutMs = 300,
): Promise<ElementIdentity | undefined> {
  if (!selector || page.isClosed()) return undefined;
  try {
    const { frame, handle } = await deadline.withLimit("identifying the element", timeoutMs, (step) =>
      page.deepLocator(selector).resolve({ deadline: step }),
    );
    try {
      const facts = await deadline.race(describeElement(frame, handle));
      return { role: facts.role, name: redactor.mask(facts.name) };
    } finally {
      void frame.release(handle);
    }
  } catch {
    return undefined;
  }
}

/** The XPath of the one element with this role and name; undefined when none or several. */
export async function findByIdentity(
  page: Page,
  identity: ElementIdentity,
  redactor: SecretRedactor,
  deadline: Deadline,
  domSettleTimeout: number | undefined,
): Promise<string | undefined> {
  const snapshot = await takeSnapshot(page, { tokenBudget: false, domSettleTimeout, deadline });
  const refs = await snapshot.elements(snapshot.ids());
  const matches = refs.filter((r) => r.role === identity.role && redactor.mask(r.name) === identity.name);
  return matches.length === 1 ? matches[0]!.xpath : undefined;
}
