// Pushes declarations to linked hosts: once per hash for a fleet-wide change (one query for the
// versions, one for the bodies, each body serialised once and its bytes shared by every link),
// per node for grants and final declarations, and never queued behind a host that does not read.
import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import type { Logger } from "pino";
import type { Declaration, Resource } from "@mesh/protocol";
import type { CommittedDeclaration, Deps } from "../deps";
import { currentDeclarations, loadBodies, type DeclarationRow } from "../services/declaration-store";
import { KeyBatcher } from "../batching/key-batcher";
import { retryDelayMs } from "../batching/retry-delay";
import { revealGrantFiles } from "../grants/reveal-grant-files";
import { parseGrantReference } from "../grants/grant-reference";
import { metrics } from "../metrics/metrics";

/**
 * Past this many bytes waiting in a link's socket the host is not keeping up: a push to it is
 * not queued, the link is marked behind and gets the then-current declaration when its socket
 * drains. Above the socket's high-water mark (16 KiB), so a write past it has asked for 'drain'.
 */
export const BEHIND_BYTES = 64 * 1024;

export interface PushLink {
  readonly nodeId: string;
  readonly ws: WebSocket;
  /** The socket under ws: its 'drain' resyncs a link that was behind. */
  readonly socket?: Duplex;
  /** The newest declaration version this host is known to hold or was sent. */
  knownVersion: number;
  /** A push was skipped because the host did not read: it is resynced on drain. */
  behind?: boolean;
  /** The last version written to this link's socket (a resync does not send it twice). */
  sentVersion?: number;
  /** Its current declaration is a retiring node's final one: a report owning nothing may complete the retirement. */
  retiring?: boolean;
  /** Frames from one host and pushes to it run in order on this chain. */
  queue: Promise<void>;
  /** A failed push waits to be tried again: one retry at a time per link (it sends whatever is current then). */
  retryPending?: boolean;
}

export interface Pusher {
  /**
   * The node's current declaration, read fresh and sent to its link: at link-up (hostHas: the
   * version the host says it holds, nothing sent if equal), for a single-node notification and
   * for a resync. Run it on the link's queue.
   */
  pushNode(link: PushLink, hostHas?: number): Promise<void>;
  /**
   * pushNode on the link's queue, retried with backoff when it fails (the database could not be read,
   * a grant could not be revealed) until it succeeds or the link closes.
   */
  pushNodeQueued(link: PushLink, hostHas?: number): void;
  /** pushNode run now (the caller is on the link's queue); a failure is retried on the queue as pushNodeQueued does. */
  pushNodeOrRetry(link: PushLink, hostHas?: number): Promise<void>;
  /** A change to any number of nodes: every link whose host is behind the database gets its declaration. */
  pushChanged(links: PushLink[]): Promise<PushSummary>;
  /**
   * Declarations this process just committed, with their bodies: each held link behind them gets its
   * frame now, with no read. Final declarations and bodies holding grant references are left to the
   * notification's path (pushChanged reads and sends them per node).
   */
  pushCommitted(links: Map<string, PushLink>, rows: CommittedDeclaration[]): Promise<PushSummary>;
}

export interface PushSummary {
  /** Links sent their declaration from a shared body, distinct bodies serialised, links sent per node. */
  shared: number;
  bodies: number;
  perNode: number;
  /** Links skipped because their socket was full (resynced on drain). */
  behind: number;
}

/** Backoff between attempts of a failed per-node push: 0.5 s doubling to 30 s. */

const linkOpen = (link: PushLink) => link.ws.readyState === link.ws.OPEN;

const holdsGrant = (resources: Resource[]) => resources.some((r) => r.type === "file" && parseGrantReference(r.content));

/** The frame up to (not including) the version: `{"type":"declaration","declaration":{"hash":…,"resources":[…]` */
function frameHead(hash: string, resources: Resource[]): Buffer {
  return Buffer.from(`{"type":"declaration","declaration":{"hash":${JSON.stringify(hash)},"resources":${JSON.stringify(resources)}`);
}

/** The per-node end of the frame: `,"version":N}}` (and `final` for a retiring node). */
function frameTail(version: number, final?: Declaration["final"]): Buffer {
  return Buffer.from(`,"version":${version}${final ? `,"final":${JSON.stringify(final)}` : ""}}}`);
}

/**
 * A send loop gives the event loop a turn after this many links or this long, whichever comes first: the
 * save's own HTTP answer, pings and the hosts' reports are not held behind thousands of sends (~95 % of
 * them the kernel's `writev`). Each link is checked again when its turn comes, so a yield never lets an
 * older version overtake a newer one sent meanwhile.
 */
export const SEND_SLICE_LINKS = 256;
export const SEND_SLICE_MS = 8;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Serialised heads kept for per-node pushes (link-up, resync), newest last: a fleet linking at once shares a few bodies. */
const RECENT_HEADS = 16;
const MAX_CACHED_HEAD_BYTES = 256 * 1024;

export function createPusher(deps: Deps, log: Logger): Pusher {
  // Per-node pushes arriving together (a fleet linking after a restart) read their versions and bodies
  // in one query each, not one per link; a load made after a commit always reads after it (key-batcher.ts).
  const declarationRows = new KeyBatcher<string, DeclarationRow>(async (ids) => new Map((await currentDeclarations(deps.db, ids)).map((r) => [r.nodeId, r])));
  const bodies = new KeyBatcher<string, Resource[]>((hashes) => loadBodies(deps.db, hashes));
  const recentHeads = new Map<string, Buffer>();
  /** The serialised head of a body without grant references: made once while it is recent, shared by every link. */
  function sharedHead(hash: string, resources: Resource[]): Buffer {
    const cached = recentHeads.get(hash);
    if (cached) return cached;
    const head = frameHead(hash, resources);
    if (head.length <= MAX_CACHED_HEAD_BYTES) {
      recentHeads.set(hash, head);
      if (recentHeads.size > RECENT_HEADS) recentHeads.delete(recentHeads.keys().next().value!);
    }
    return head;
  }

  /**
   * Sends head and tail as ONE text message in two websocket fragments. ws writes an unmasked
   * Buffer to the socket as it is (frame header, then the Buffer itself), so a head shared by
   * a thousand links is held once, referenced by each socket's queue until written.
   */
  function write(link: PushLink, head: Buffer, tail: Buffer): boolean {
    if (link.ws.readyState !== link.ws.OPEN) return false;
    if (link.ws.bufferedAmount > BEHIND_BYTES) {
      markBehind(link);
      return false;
    }
    // Both calls in one tick: no other data frame of this link can come between the fragments. Corked,
    // the two fragments (four buffers) leave in one write to the kernel instead of two.
    link.socket?.cork();
    link.ws.send(head, { binary: false, fin: false });
    link.ws.send(tail, { binary: false, fin: true });
    link.socket?.uncork();
    metrics.framesSent.inc({ type: "declaration" });
    return true;
  }

  function markBehind(link: PushLink) {
    if (link.behind) return;
    link.behind = true;
    log.warn({ nodeId: link.nodeId, buffered: link.ws.bufferedAmount }, "host does not read its link; its declaration waits until it does");
    // The socket asked for 'drain' when its buffer passed the high-water mark (BEHIND_BYTES is above it).
    // Without a socket, the next push or the heartbeat is the only chance: a link stuck past the ping
    // timeout is dropped by the heartbeat, and the host gets the current declaration when it links again.
    link.socket?.once("drain", () => {
      link.behind = false;
      log.info({ nodeId: link.nodeId }, "host reads its link again; resyncing its declaration");
      queue(link, () => pushNode(link, undefined, true));
    });
  }

  /** Runs a push on the link's queue; a failure is logged and the push retried after a pause while the link is open. */
  function queue(link: PushLink, push: () => Promise<void>, failures = 0) {
    link.queue = link.queue.then(push).catch((err) => retryLater(link, push, err, failures + 1));
  }

  function retryLater(link: PushLink, push: () => Promise<void>, err: unknown, failures: number) {
    // Failures during an outage do not each start a timer: the one retry reads the current declaration.
    if (!linkOpen(link) || link.retryPending) return;
    link.retryPending = true;
    const delayMs = retryDelayMs(failures);
    log.warn({ err, nodeId: link.nodeId, failures, retryInMs: delayMs }, "push failed; will retry");
    setTimeout(() => {
      link.retryPending = false;
      if (linkOpen(link)) queue(link, push, failures);
    }, delayMs).unref();
  }

  async function pushNodeOrRetry(link: PushLink, hostHas?: number) {
    const push = () => pushNode(link, hostHas);
    await push().catch((err) => retryLater(link, push, err, 1));
  }

  function pushNodeQueued(link: PushLink, hostHas?: number) {
    queue(link, () => pushNode(link, hostHas));
  }

  async function pushNode(link: PushLink, hostHas?: number, resync = false) {
    const current = await declarationRows.load(link.nodeId);
    if (!current) return;
    link.retiring = Boolean(current.final);
    // Written before the host fell behind: it is in the socket already.
    if (resync && current.version === link.sentVersion) return;
    if (hostHas !== undefined && current.version === hostHas) return;
    // A fleet-wide push may have sent this version (or a newer one) while this read was in flight:
    // at link-up, anything it sent; later, anything newer (a single-node notification resends the
    // same version on purpose: a grant that settled lets a held-back declaration go).
    if (hostHas !== undefined && link.knownVersion !== hostHas && current.version <= link.knownVersion) return;
    if (hostHas === undefined && current.version < link.knownVersion) return;
    const known = link.knownVersion;
    link.knownVersion = Math.max(link.knownVersion, current.version);
    // Not sent after all (the body could not be read, or is held back): the link is still behind, so a
    // retry, a later report or a resync finds it so (unless something newer was sent meanwhile).
    const unsent = () => {
      if (link.knownVersion === current.version && current.version > known) link.knownVersion = known;
    };
    let resources: Resource[] | undefined;
    try {
      resources = await bodies.load(current.hash);
    } catch (err) {
      unsent();
      throw err;
    }
    if (!resources) return unsent();
    let head: Buffer;
    if (holdsGrant(resources)) {
      // The stored declaration holds grant references; the host gets the credentials themselves.
      let revealed: Awaited<ReturnType<typeof revealGrantFiles>>;
      try {
        revealed = await revealGrantFiles(deps.db, deps.grants?.secrets, link.nodeId, resources);
      } catch (err) {
        unsent();
        throw err;
      }
      if (!revealed.ok) {
        log.info({ nodeId: link.nodeId, version: current.version, reason: revealed.reason }, "declaration held back");
        return unsent();
      }
      head = frameHead(current.hash, revealed.resources);
    } else head = sharedHead(current.hash, resources);
    // A fleet-wide push may have sent a newer version while this one read its body: never send an older one.
    if (link.knownVersion > current.version) return;
    if (write(link, head, frameTail(current.version, current.final ?? undefined))) {
      link.sentVersion = Math.max(link.sentVersion ?? 0, current.version);
      log.info({ nodeId: link.nodeId, version: current.version }, "declaration pushed");
    } else unsent();
  }

  async function pushChanged(links: PushLink[]): Promise<PushSummary> {
    const summary: PushSummary = { shared: 0, bodies: 0, perNode: 0, behind: 0 };
    const started = performance.now();
    const byNode = new Map(links.map((l) => [l.nodeId, l]));
    const rows = await currentDeclarations(deps.db, [...byNode.keys()]);
    const stale = rows.filter((r) => r.version > (byNode.get(r.nodeId)?.knownVersion ?? Infinity));
    if (stale.length === 0) return summary;
    const perNode = (link: PushLink) => {
      summary.perNode++;
      pushNodeQueued(link);
    };
    const shareable = stale.filter((r) => !r.final);
    const bodies = await loadBodies(
      deps.db,
      shareable.map((r) => r.hash),
    );
    const sending = performance.now();
    await sendShared(stale, byNode, (hash) => bodies.get(hash), perNode, summary);
    // Where a fleet push's time goes: reading versions and bodies, then the send loop (its time includes the turns it yields).
    const readMs = Math.round(sending - started);
    log.info({ links: links.length, ...summary, readMs, sendMs: Math.round(performance.now() - sending) }, "fleet declarations pushed");
    return summary;
  }

  /**
   * The send loop of a fleet push: each row's frame from a head serialised once per hash and a tail once
   * per version, to its link if the link is still behind it. A row without a shareable body (final, not
   * found, holding grant references) goes to `perNode`. It yields to the event loop every SEND_SLICE_LINKS
   * links or SEND_SLICE_MS; a link is checked (up, behind this row) when its own turn comes.
   */
  async function sendShared(
    rows: Array<Pick<DeclarationRow, "nodeId" | "version" | "hash" | "final">>,
    byNode: Map<string, PushLink>,
    bodyOf: (hash: string) => Resource[] | undefined,
    perNode: (link: PushLink) => void,
    summary: PushSummary,
  ) {
    const heads = new Map<string, Buffer>();
    const tails = new Map<number, Buffer>();
    let sliceStart = performance.now();
    let inSlice = 0;
    for (const row of rows) {
      if (inSlice >= SEND_SLICE_LINKS || (inSlice > 0 && performance.now() - sliceStart >= SEND_SLICE_MS)) {
        await nextTurn();
        sliceStart = performance.now();
        inSlice = 0;
      }
      const link = byNode.get(row.nodeId);
      if (!link) continue;
      const resources = row.final ? undefined : bodyOf(row.hash);
      // Retiring nodes, and bodies whose grant references are revealed per node, are read and sent one by one.
      if (!resources || holdsGrant(resources)) {
        perNode(link);
        continue;
      }
      // Checked again here: a per-node push may have sent a newer version meanwhile.
      if (row.version <= link.knownVersion || link.ws.readyState !== link.ws.OPEN) continue;
      let head = heads.get(row.hash);
      if (!head) heads.set(row.hash, (head = frameHead(row.hash, resources)));
      let tail = tails.get(row.version);
      if (!tail) tails.set(row.version, (tail = frameTail(row.version)));
      inSlice++;
      if (write(link, head, tail)) {
        link.knownVersion = row.version;
        link.sentVersion = row.version;
        summary.shared++;
      } else summary.behind++;
    }
    summary.bodies = heads.size;
  }

  async function pushCommitted(links: Map<string, PushLink>, rows: CommittedDeclaration[]): Promise<PushSummary> {
    const summary: PushSummary = { shared: 0, bodies: 0, perNode: 0, behind: 0 };
    const started = performance.now();
    const bodies = new Map<string, Resource[]>();
    for (const row of rows) if (!row.final && !bodies.has(row.hash)) bodies.set(row.hash, row.resources as Resource[]);
    // Final declarations and grant-holding bodies: left to the notification (pushChanged sends them per node).
    await sendShared(
      rows,
      links,
      (hash) => bodies.get(hash),
      () => void summary.perNode++,
      summary,
    );
    if (summary.shared > 0 || summary.behind > 0)
      log.info({ rows: rows.length, ...summary, sendMs: Math.round(performance.now() - started) }, "committed declarations pushed");
    return summary;
  }

  return { pushNode, pushNodeQueued, pushNodeOrRetry, pushChanged, pushCommitted };
}
