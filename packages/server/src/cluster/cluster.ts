// Several nodes, one service: what a node of a cluster knows and does beyond a lone node. Every
// node shares the PostgreSQL store (keys, sessions, replays, cache, leases) and registers there the
// address the others reach it at (`--advertise-url`) with its capacity (`--max-sessions`). Any node
// can then serve any request: one for a session another live node owns is forwarded there
// (forward.ts, signed with the cluster secret: trust.ts), and a new session is placed first on a
// node that already runs its project's browser (so that a project's sessions share one browser
// process, as on a lone node, rather than each node launching one for it), then on one with a warm
// browser, then on the one with the most free capacity (see affinity). No consensus of our own: the
// database says who owns what and who is alive, and the load balancer in front only needs to
// spread requests.

import type { FastifyBaseLogger } from "fastify";
import type { ClusterNode, NodeReadiness, SessionRecord, Store } from "../store/store.ts";
import { Forwarder, type ForwardTarget } from "./forward.ts";
import { ClusterTrust, NODE_HEADER } from "./trust.ts";

export interface ClusterOptions {
  store: Store;
  nodeId: string;
  /** Where the other nodes reach this one: http(s)://host:port, no path. */
  advertiseUrl: string;
  /** Shared by every node (`--cluster-secret`, DECKHAND_CLUSTER_SECRET). */
  secret: string;
  log: FastifyBaseLogger;
  /** How many more sessions a node can take; default freeCapacity. */
  freeCapacity?: (node: ClusterNode) => number;
  /**
   * What this node can start now without a browser launch, read fresh from its pool (the store
   * has it as of its last publication; the other nodes' come from there).
   */
  readiness?: () => NodeReadiness;
  /**
   * Whether a project's sessions share browsers (`--isolation project`, the default): only then is
   * a node that runs the project's sessions worth more to its next one (see affinity).
   */
  sharesBrowsers?: boolean;
}

/**
 * How many more sessions a node can take: its --max-sessions less its active sessions (the
 * session table), none while it drains. Placement asks this, then readyCapacity for which of those
 * start without a browser launch.
 */
export function freeCapacity(node: ClusterNode): number {
  if (node.draining || !node.live) return 0;
  return Math.max(0, (node.maxSessions ?? 0) - node.activeSessions);
}

/**
 * How many sessions of `projectId` a node can start now without launching a browser, from what it
 * published (its warm browsers, room in the project's own browsers), within its free capacity.
 */
export function readyCapacity(node: ClusterNode, projectId: string, free: number): number {
  const ready = node.ready;
  if (!ready) return 0;
  return Math.min(free, ready.anyProject + (ready.projects[projectId] ?? 0));
}

/**
 * How well a node suits a new session of a project, highest first (placement sorts by this, then
 * by free capacity):
 *
 * - 3: room in a launched browser of the project (it published so): no launch, and no memory
 *   beyond the session's own;
 * - 2: it runs sessions of the project (the session table, committed before their start answered,
 *   so a start sent elsewhere right after sees it even before the node's readiness is published):
 *   its browser of the project is there, with room unless it is full;
 * - 1: a warm browser: no launch, but another browser process for the project if it runs elsewhere;
 * - 0: free capacity only (a browser is launched).
 *
 * Without shared browsers (`--isolation session`) a project's sessions gain nothing together: only
 * warm browsers count.
 */
export function affinity(
  node: ClusterNode,
  projectId: string,
  free: number,
  sharesBrowsers: boolean,
): 0 | 1 | 2 | 3 {
  if (sharesBrowsers && free > 0) {
    if ((node.ready?.projects[projectId] ?? 0) > 0) return 3;
    if ((node.projectSessions ?? 0) > 0) return 2;
  }
  return readyCapacity(node, projectId, free) > 0 ? 1 : 0;
}

/** The advertise URL, checked: http or https, a host, nothing after the port. */
export function parseAdvertiseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new RangeError(
      `--advertise-url must be an absolute http(s) URL where the other nodes reach this one, such as ` +
        `http://10.0.0.5:3000; got ${JSON.stringify(value)}.`,
    );
  }
  if ((url.protocol !== "http:" && url.protocol !== "https:") || !url.hostname) {
    throw new RangeError(`--advertise-url must be an http or https URL; got ${JSON.stringify(value)}.`);
  }
  if (url.pathname !== "/" || url.search || url.hash || url.username || url.password) {
    throw new RangeError(
      `--advertise-url is the node's origin only (scheme, host, port), with no path, query or credentials; ` +
        `got ${JSON.stringify(value)}.`,
    );
  }
  return url.origin;
}

export class Cluster {
  readonly nodeId: string;
  readonly advertiseUrl: string;
  readonly trust: ClusterTrust;
  readonly forwarder: Forwarder;
  private readonly store: Store;
  private readonly log: FastifyBaseLogger;
  private readonly capacity: (node: ClusterNode) => number;
  private readonly readiness: (() => NodeReadiness) | undefined;
  private readonly sharesBrowsers: boolean;

  constructor(options: ClusterOptions) {
    this.nodeId = options.nodeId;
    this.advertiseUrl = parseAdvertiseUrl(options.advertiseUrl);
    this.store = options.store;
    this.log = options.log;
    this.trust = new ClusterTrust(options.secret, options.nodeId);
    this.forwarder = new Forwarder(this.trust);
    this.capacity = options.freeCapacity ?? freeCapacity;
    this.readiness = options.readiness;
    this.sharesBrowsers = options.sharesBrowsers ?? true;
  }

  /**
   * The node to forward a request for this session to: its owner, when that is another node whose
   * lease is live and that has an address. Undefined otherwise: the session is this node's, or its
   * owner's lease lapsed (the route then reclaims it and answers 410), or the owner cannot be
   * forwarded to (it runs without --advertise-url: the route answers 409 as before clusters).
   */
  async remoteOwner(record: SessionRecord): Promise<ForwardTarget | undefined> {
    if (record.nodeId === undefined || record.nodeId === this.nodeId) return undefined;
    return this.forwardable(record.nodeId);
  }

  /** A live node with an address, by id. */
  async forwardable(nodeId: string): Promise<ForwardTarget | undefined> {
    if (nodeId === this.nodeId) return undefined;
    const node = await this.store.getNode(nodeId);
    if (!node?.live || !node.advertiseUrl) return undefined;
    return { id: node.id, advertiseUrl: node.advertiseUrl };
  }

  /**
   * The nodes that can take a new session of `projectId`, best first: by affinity (the project's
   * own browser with room, a node running the project's sessions, a warm browser), then the most
   * free capacity; this node first among equals (no hop). A project's sessions thus stay on one
   * node until it is full, and spill to the next best only then. Empty: no node has room.
   */
  async placement(
    projectId: string,
  ): Promise<(ClusterNode & { free: number; withoutLaunch: number; affinity: number })[]> {
    const nodes = await this.store.listLiveNodes(projectId);
    return nodes
      .filter((node) => node.id === this.nodeId || node.advertiseUrl !== undefined)
      .map((node) => {
        const own = node.id === this.nodeId && this.readiness ? { ...node, ready: this.readiness() } : node;
        const free = this.capacity(own);
        return {
          ...own,
          free,
          withoutLaunch: readyCapacity(own, projectId, free),
          affinity: affinity(own, projectId, free, this.sharesBrowsers),
        };
      })
      .filter((node) => node.free > 0)
      .sort(
        (a, b) =>
          b.affinity - a.affinity ||
          Number(b.withoutLaunch > 0) - Number(a.withoutLaunch > 0) ||
          b.free - a.free ||
          Number(b.id === this.nodeId) - Number(a.id === this.nodeId) ||
          a.id.localeCompare(b.id),
      );
  }

  /**
   * Checks, once the node listens, that the advertised address reaches this very node (not
   * another, not nothing): a wrong address would send the others' forwarded requests astray.
   */
  async checkAdvertised(): Promise<void> {
    const probe = new URL("/healthz", this.advertiseUrl);
    let answered: string | null;
    try {
      const response = await fetch(probe, { signal: AbortSignal.timeout(5_000) });
      await response.arrayBuffer();
      answered = response.headers.get(NODE_HEADER);
    } catch (error) {
      throw new Error(
        `--advertise-url ${this.advertiseUrl} does not reach this node: GET ${probe} failed ` +
          `(${(error as Error).message}). Give the address the other nodes reach this one at.`,
      );
    }
    if (answered !== this.nodeId) {
      throw new Error(
        `--advertise-url ${this.advertiseUrl} reaches ${answered ? `another node (${answered})` : "something that is not a Deckhand node"}, ` +
          "not this one. Give the address the other nodes reach this one at.",
      );
    }
    this.log.info(
      { nodeId: this.nodeId, advertiseUrl: this.advertiseUrl },
      "cluster: this node is reachable at its advertised address",
    );
  }

  close(): Promise<void> {
    return this.forwarder.close();
  }
}
