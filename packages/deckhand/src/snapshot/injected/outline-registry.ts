// Which element each id of an outline stands for, kept per snapshot (the last few generations), and
// the answers given for those ids afterwards: descriptions, ids by role, link URLs, elements.
//
// Self-contained: `installOutlineRegistry` is sent to the page as source text.

import type { InPageFailure } from "../../browser/injected/dom-runtime.ts";
import type { XPathAccess } from "../../browser/injected/xpath.ts";
import type { TextHelpers } from "./text.ts";

export interface ElementDescription {
  xpath: string;
  role: string;
  name: string;
  tag: string;
  url?: string;
}

export interface Registry {
  elements: Element[];
  meta: [string, string][];
  iframes: Element[];
}

/** Elements by role and, when `names` is given, by name (nameKey()s: case and spacing aside). */
export interface RoleLookup {
  roles: string[];
  names?: string[];
}

export function installOutlineRegistry(xpaths: XPathAccess, text: TextHelpers) {
  const registries = new Map<number, Registry>();
  const { nameKey } = text;

  /** A new registry for a capture of `generation`; those more than three generations older are dropped. */
  function begin(generation: number): Registry {
    const registry: Registry = { elements: [], meta: [], iframes: [] };
    registries.set(generation, registry);
    for (const g of registries.keys()) if (g < generation - 3) registries.delete(g);
    return registry;
  }

  function describeOne(registry: Registry, generation: number, i: number): ElementDescription {
    const el = registry.elements[i];
    // Ids come from the snapshot that made this registry: a missing one is a bug, not the page.
    if (!el) throw new Error(`no element ${i} in snapshot ${generation}`);
    const [role, name] = registry.meta[i]!;
    const description: ElementDescription = { xpath: xpaths.xpathOf(el), role, name, tag: el.localName };
    const href = (el as HTMLAnchorElement).href;
    if (typeof href === "string" && href) description.url = href;
    return description;
  }

  /**
   * [local id, role, name] of the registry's elements that `lookup` asks for. Only those are sent
   * back: on a page of thousands, sending every element of a role would cost more than the look.
   */
  function ofRoles(registry: Registry, lookup: RoleLookup): [number, string, string][] {
    const roles = new Set(lookup.roles);
    const names = lookup.names ? new Set(lookup.names) : undefined;
    const found: [number, string, string][] = [];
    registry.meta.forEach(([role, name], i) => {
      if (roles.has(role) && (!names || names.has(nameKey(name)))) found.push([i, role, name]);
    });
    return found;
  }

  function registryFor(generation: number): Registry | InPageFailure {
    return (
      registries.get(generation) ?? {
        failed: "stale-snapshot",
        detail: `snapshot ${generation} is gone (the page navigated or a newer snapshot replaced it)`,
      }
    );
  }

  function isFailure(value: Registry | InPageFailure): value is InPageFailure {
    return "failed" in value;
  }

  return {
    begin,

    describe(generation: number, localIds: number[]): ElementDescription[] | InPageFailure {
      const registry = registryFor(generation);
      if (isFailure(registry)) return registry;
      const all = () => localIds.map((i) => describeOne(registry, generation, i));
      return localIds.length > 20 ? xpaths.withStepCache(all) : all();
    },

    /** The elements of `generation`'s registry that `lookup` asks for (the capture's own list). */
    ofRoles(generation: number, lookup: RoleLookup): [number, string, string][] {
      const registry = registries.get(generation);
      return registry ? ofRoles(registry, lookup) : [];
    },

    /**
     * The local ids, roles and names of the elements `lookup` asks for: what the outline recorded
     * when it was taken, no XPath (cheap for every element of a large page).
     */
    withRoles(generation: number, lookup: RoleLookup): [number, string, string][] | InPageFailure {
      const registry = registryFor(generation);
      return isFailure(registry) ? registry : ofRoles(registry, lookup);
    },

    /** [local id, absolute URL] of every link-like element of a snapshot. */
    urls(generation: number): [number, string][] | InPageFailure {
      const out: [number, string][] = [];
      const registry = registryFor(generation);
      if (isFailure(registry)) return registry;
      registry.elements.forEach((el, i) => {
        const href = (el as HTMLAnchorElement).href;
        if (typeof href === "string" && href) out.push([i, href]);
      });
      return out;
    },

    element(generation: number, localId: number): Element | null | InPageFailure {
      const registry = registryFor(generation);
      if (isFailure(registry)) return registry;
      const el = registry.elements[localId];
      return el?.isConnected ? el : null;
    },

    iframeAt(generation: number, index: number): Element | null | InPageFailure {
      const registry = registryFor(generation);
      if (isFailure(registry)) return registry;
      return registry.iframes[index] ?? null;
    },
  };
}

export type OutlineRegistry = ReturnType<typeof installOutlineRegistry>;
