// The agent gateway: holds hosts' websocket links, pushes a node's declaration
// when the bus says it changed, stores the reports it receives. Liveness is kept
// in memory (ping/pong); the database sees transitions, batched (PresenceBatcher), and
// a batched "last checked" for unchanged reports; an idle link writes nothing (last-seen.ts).
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket, type RawData } from "ws";
import { CHANNELS, MANY_NODES, type ChangeBus } from "@mesh/db";
import {
  CloseCode,
  EVERY_FEATURE,
  FEATURES_HEADER,
  HOST_FEATURE,
  HOST_FEATURES_HEADER,
  HostFrame,
  LIMITS,
  describeZodError,
  linkRefusal,
  parseFeatures,
  refusalResponseText,
  type FactsFrame,
  type LinkRefusal,
  type ReportFrame,
  type ServerFrame,
} from "@mesh/protocol";
import type { Deps, LocalPush } from "../deps";
import { SETTING, settingOnce } from "../services/settings";
import { ReportBatcher, reportHash } from "../services/report-batch";
import { RateLimiter } from "../http/rate-limiter";
import { createReportPacer, type CarriedDrift } from "./report-pacer";
import { Pacer } from "./pacer";
import { contentHash } from "../compile/hash";
import { retireGateway, touchLastChecked } from "../services/presence";
import { startGatewayBeat } from "./gateway-beat";
import { PresenceBatcher } from "../services/presence-batch";
import { recompileForFacts, updateFacts, type AuditSlot } from "../services/update-facts";
import { completeRetirement } from "../services/lifecycle";
import { retryDelayMs } from "../batching/retry-delay";
import { createPusher, type PushLink } from "./push";
import { DeclarationCatchUp } from "./catch-up";
import { ChallengeIssuer } from "./challenge";
import { databaseUsedNonces } from "./used-nonces";
import { authenticateLink, batchedNodeLookup, parseAuthHeader, stateRefusal } from "./link-auth";
import { ConnectLimit } from "./connect-limit";
import { DEFAULT_HANDSHAKES_IN_FLIGHT, FairLinkAdmission, type Admission, type HandshakeDone } from "./admission";
import { HandshakePasses } from "./handshake-passes";
import { EventBudget } from "../http/event-budget";
import { addressKey } from "../http/address-key";
import { asMeshError } from "../errors";
import { createReconcileDelivery } from "./reconcile-delivery";
import { metrics } from "../metrics/metrics";

export interface GatewayOptions {
  deps: Deps;
  bus: ChangeBus;
  gatewayId?: string;
  pingIntervalMs?: number;
  /** How often "last checked" is written for the nodes whose reports came unchanged, in one statement (default 60 s). */
  lastCheckedFlushMs?: number;
  /** How long a connect or disconnect waits for others to share its transaction (default 100 ms)... */
  presenceWindowMs?: number;
  /** ...or until this many are waiting (default 500). */
  presenceBatchItems?: number;
  /** How often this instance says it is alive (default 5 s). */
  heartbeatMs?: number;
  /** Silence after which another instance is dead and its nodes are released (default max(6 beats, 30 s)). */
  staleMs?: number;
  /** A node's changed reports are written at most once per this interval; one sooner waits (default 2 s). */
  reportIntervalMs?: number;
  /** How long a changed report waits for others to share its transaction (default 50 ms)... */
  reportWindowMs?: number;
  /** ...or until this many are waiting (default 1,000). */
  reportBatchItems?: number;
  /** Frames one link may have waiting to be handled before its socket is paused (default 8). */
  framesInFlight?: number;
  /** A node's changed facts are stored at most once per this interval (default 5 s). */
  factsIntervalMs?: number;
  /** A node is recompiled for changed facts at most once per this interval (default 5 min). */
  factsRecompileIntervalMs?: number;
  /** Authenticated connects one node may make per minute; past it the upgrade is answered 503 with Retry-After (default 10). */
  connectsPerMinute?: number;
  /** How long a report's comparison with the node's current declaration waits for others to share it (default 1 s). */
  reportCheckWindowMs?: number;
  /** Link handshakes started per second at most (admitted at the challenge); the rest are answered 503 with a Retry-After that spreads them (admission.ts). */
  admissionsPerSecond?: number;
  /** Of those, what one address key may start per second (default a quarter of the rate; admission.ts). */
  admissionsPerAddressPerSecond?: number;
  /** Link handshakes in flight (challenge issued, upgrade not yet settled) at most (default 512; admission.ts). */
  handshakesInFlight?: number;
  /** Of those, what one address key may hold (default a quarter of the bound). */
  handshakesInFlightPerAddress?: number;
}

/** Drift events per node per window; past it, reports are still stored and the next event counts what was left out. */
const DRIFT_EVENTS_PER_WINDOW = 20;
const DRIFT_EVENT_WINDOW_MS = 10 * 60_000;
/** Connect/disconnect event pairs per node per window: a host reconnecting in a loop cannot flood the audit either. */
const LINK_EVENTS_PER_WINDOW = 20;
/**
 * Every other event a host can cause (facts, facts refused, roles changed by facts, store lost), and
 * its error frames in the log: per node and kind, this many per hour; past it left out and counted.
 */
const HOST_EVENTS_PER_HOUR = 10;
const HOUR_MS = 60 * 60_000;
/** Error frames a node may have logged per 10 minutes. */
const ERROR_LINES_PER_WINDOW = 10;
/** What the gateway keeps buffered for one host that does not read: four of the largest frames. */
const OUTBOUND_BYTES = 4 * LIMITS.frameBytes;
/**
 * Frames already read from the socket when it pauses still arrive (one read holds up to
 * 64 KiB of small frames, or part of one large one): past these the host is closed, 4429.
 */
const HARD_FRAMES_IN_FLIGHT = 4096;
/** A gateway is swept as dead after this many missed beats, and never sooner than MIN_STALE_MS. */
const SWEEP_BEATS = 6;
const MIN_STALE_MS = 30_000;
const hardBytesInFlight = (frames: number) => 2 * frames * LIMITS.hostFrameBytes;
/** The declaration channel's payload for "any number of nodes changed". */

interface Link extends PushLink {
  nodeId: string;
  /** This link's own id, stored with the node while it marks it connected (see markDisconnected). */
  id: string;
  ws: WebSocket;
  alive: boolean;
  /** Frames from one host are handled in order. */
  queue: Promise<void>;
  /** Frames (and their bytes) received and not yet handled: bounded by pausing the socket. */
  inFlight: number;
  inFlightBytes: number;
  pauses: number;
  overloaded: boolean;
  /** Whether this link's connect was audited; its disconnect is audited alike. */
  audited: boolean;
  /** The newest declaration version this host reported (knownVersion, what it holds or was sent, is in PushLink). */
  reportedVersion: number;
  /** The hash of the report this link last stored or found stored: one equal to it is acked without a database call. */
  storedReport?: string;
  /** Its connect was accepted (the node may still link with this key): only then do fleet-wide pushes reach it. */
  ready: boolean;
  /** The key it authenticated with: a node re-keyed since closes this link. */
  publicKey: string;
  /** The server frames its host named on the upgrade (HOST_FEATURES_HEADER): a reconcile frame goes only to one that reads it. */
  hostFeatures: Set<string>;
}

/** The host features this gateway knows, the only ones kept per link and stored with the node. */
const KNOWN_HOST_FEATURES: ReadonlySet<string> = new Set(Object.values(HOST_FEATURE));

export interface Gateway {
  readonly id: string;
  /** onSettled: called once authentication is over (accepted or refused), so the caller can end its handshake deadline. */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, onSettled?: () => void): void;
  handleChallenge(req: IncomingMessage, res: ServerResponse): void;
  connectedNodes(): string[];
  /** What a commit in this process made current, sent to the links held here at once (Deps.localPush). */
  readonly localPush: LocalPush;
  close(): Promise<void>;
}

/** Ends an upgrade with the refusal (its code and status, the same bytes the host's test control plane sends). */
function refuseUpgrade(socket: Duplex, refusal: LinkRefusal, retryAfterSeconds?: number) {
  socket.end(refusalResponseText(refusal, retryAfterSeconds));
}

const ADMITTING = "the gateway is admitting links at its rate; try again later";

export async function createGateway(options: GatewayOptions): Promise<Gateway> {
  const { deps, bus } = options;
  const log = deps.log.child({ component: "gateway" });
  const id = options.gatewayId ?? `gw-${randomBytes(4).toString("hex")}`;
  const secret = await settingOnce(deps.db, SETTING.linkSecret, randomBytes(32).toString("base64"));
  const challenges = new ChallengeIssuer(Buffer.from(secret, "base64"), databaseUsedNonces(deps.db));
  const links = new Map<string, Link>();
  metrics.setLinksSource(() => links.size);
  const lookupNode = batchedNodeLookup(deps.db);
  /** Nodes whose report came unchanged since the last "last checked" write. */
  const checked = new Set<string>();
  const presence = new PresenceBatcher(deps, id, { windowMs: options.presenceWindowMs, maxItems: options.presenceBatchItems });
  const framesInFlight = options.framesInFlight ?? 8;
  const driftEvents = new RateLimiter(DRIFT_EVENTS_PER_WINDOW, DRIFT_EVENT_WINDOW_MS);
  const suppressedDrift = new Map<string, number>();
  const linkEvents = new RateLimiter(LINK_EVENTS_PER_WINDOW, DRIFT_EVENT_WINDOW_MS);
  const suppressedLinkEvents = new Map<string, number>();
  const hostEvents = new EventBudget(HOST_EVENTS_PER_HOUR, HOUR_MS);
  /** A refused identity claim is told once per distinct claim per hour. */
  const refusedClaims = new RateLimiter(1, HOUR_MS);
  const errorLines = new EventBudget(ERROR_LINES_PER_WINDOW, DRIFT_EVENT_WINDOW_MS);
  const refusedLinks = new EventBudget(ERROR_LINES_PER_WINDOW, DRIFT_EVENT_WINDOW_MS);
  const connects = new ConnectLimit(options.connectsPerMinute ?? 10, 60_000);
  const admission = new FairLinkAdmission({
    perSecond: options.admissionsPerSecond,
    perAddress: options.admissionsPerAddressPerSecond,
    inFlight: options.handshakesInFlight ?? DEFAULT_HANDSHAKES_IN_FLIGHT,
    perAddressInFlight: options.handshakesInFlightPerAddress,
  });
  /** Handshakes admitted at their challenge, by nonce: their upgrade is not charged again. */
  const passes = new HandshakePasses();
  /** One handshake asks the admission (expired passes first give their slots back). */
  const admit = (address: string | undefined): Admission => {
    passes.sweep();
    return admission.admit(addressKey(address));
  };
  const factsAudit =
    (nodeId: string): AuditSlot =>
    (action, detail) => {
      if (detail !== undefined && !refusedClaims.take(`${nodeId}\u0000${detail}`)) return null;
      return hostEvents.take(`${nodeId}\u0000${action}`);
    };
  /** Runs a deferred write in the link's order, or at once when the link is gone. */
  const onLinkQueue = (nodeId: string, write: () => Promise<void>) => {
    const link = links.get(nodeId);
    const fail = (err: unknown) => log.error({ err, nodeId }, "deferred write failed");
    if (link) link.queue = link.queue.then(write).catch(fail);
    else write().catch(fail);
  };
  /** A report frame's hash, computed once: the fast path, the pacer and the writer each ask for it. */
  const reportHashes = new WeakMap<ReportFrame, string>();
  const hashOf = (frame: ReportFrame) => {
    let hash = reportHashes.get(frame);
    if (hash === undefined) reportHashes.set(frame, (hash = reportHash(frame.report)));
    return hash;
  };
  const pacer = createReportPacer({
    intervalMs: options.reportIntervalMs ?? 2_000,
    hash: hashOf,
    release: (nodeId, frame, carriedDrift) => onLinkQueue(nodeId, () => writeReport(nodeId, frame, carriedDrift)),
  });
  const factsPacer = new Pacer<FactsFrame>({
    intervalMs: options.factsIntervalMs ?? 5_000,
    hash: (frame) => contentHash(frame),
    release: (nodeId, frame) => onLinkQueue(nodeId, () => applyFacts(nodeId, frame)),
  });
  // Facts that change the profile may change the node's roles: recompiled at most once per
  // interval (the latest stored profile counts), so a host toggling a fact cannot mint declarations.
  let profileChanges = 0;
  const recompilePacer = new Pacer<string>({
    intervalMs: options.factsRecompileIntervalMs ?? 5 * 60_000,
    hash: (change) => change,
    release: (nodeId) => onLinkQueue(nodeId, () => recompileFacts(nodeId)),
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.hostFrameBytes, perMessageDeflate: false, clientTracking: false });
  // What this gateway reads beyond the first protocol: a host sends report origins only when told so.
  wss.on("headers", (headers) => headers.push(`${FEATURES_HEADER}: ${EVERY_FEATURE}`));

  const pusher = createPusher(deps, log);
  // Delivery never rests on one notification: bus gaps and hosts' reports compare links with the database.
  const catchUp = new DeclarationCatchUp(pusher, log, {
    links: () => [...links.values()].filter((l) => l.ready && l.ws.readyState === l.ws.OPEN),
    holds: (l) => links.get(l.nodeId) === l && (l as Link).ready && l.ws.readyState === l.ws.OPEN,
    reportWindowMs: options.reportCheckWindowMs,
  });
  // Changed reports of all links written together: a fleet reporting at once is a few transactions, not one per host.
  const reports = new ReportBatcher(deps, { windowMs: options.reportWindowMs, maxItems: options.reportBatchItems });

  /** Acks and notices; declarations go through the pusher, which leaves a slow host behind instead of queueing. */
  function send(link: Link, frame: ServerFrame | Buffer) {
    if (link.ws.readyState !== link.ws.OPEN) return;
    // A host that does not read its socket must not make the gateway hold what it is sent.
    if (link.ws.bufferedAmount > OUTBOUND_BYTES) {
      log.warn({ nodeId: link.nodeId, buffered: link.ws.bufferedAmount }, "host does not read its link; dropping it");
      link.ws.terminate();
      return;
    }
    link.ws.send(Buffer.isBuffer(frame) ? frame : JSON.stringify(frame));
    metrics.framesSent.inc({ type: Buffer.isBuffer(frame) ? "declaration" : frame.type });
  }

  async function handleFrame(link: Link, data: RawData, isBinary: boolean) {
    const text = isBinary ? null : data.toString();
    let json: unknown;
    try {
      json = text === null ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    const parsed = HostFrame.safeParse(json);
    if (!parsed.success) {
      const reason = json === undefined ? "frame is not JSON text" : describeZodError(parsed.error);
      log.warn({ nodeId: link.nodeId, reason }, "bad frame from host; closing link");
      link.ws.close(CloseCode.badFrame, `bad frame: ${reason}`.slice(0, 120));
      return;
    }
    const frame = parsed.data;
    if (frame.type === "report") {
      metrics.reconcileErrors.inc(frame.report.errors.length);
      // A report of a declaration it was sent is a state change, not a flood: written (and acked) at once,
      // at most once per version pushed. Self-upgrade waits for this ack before the host exits.
      const version = frame.report.declarationVersion;
      const applied = version > link.reportedVersion && version <= link.knownVersion;
      link.reportedVersion = Math.max(link.reportedVersion, version);
      if (applied) {
        await writeReport(link.nodeId, frame, [...(pacer.take(link.nodeId, frame)?.values() ?? [])]);
        return;
      }
      // Not the first report of a version it was just sent: the host may be behind a change whose
      // notification this gateway never heard. Compared with the database in a batch, at most one a window.
      if (link.ready) catchUp.reported(link);
      // Equal to what is stored, and no other report of this node waits to replace it: no database
      // call of its own, only "checked" (a timer report, every few minutes from every host); its version
      // joins the catch-up above, one read per window for all such links.
      if (link.storedReport !== undefined && !pacer.isWaiting(link.nodeId) && hashOf(frame) === link.storedReport) {
        checked.add(link.nodeId);
        metrics.reportsUnchanged.inc();
        send(link, { type: "ack", seq: frame.seq });
        await finishRetirement(link.nodeId, frame);
        return;
      }
      const offer = pacer.offer(link.nodeId, frame);
      if (offer === "now") await writeReport(link.nodeId, frame);
      else if (offer === "unchanged") {
        checked.add(link.nodeId);
        metrics.reportsUnchanged.inc();
        send(link, { type: "ack", seq: frame.seq });
        await finishRetirement(link.nodeId, frame);
      }
    } else if (frame.type === "facts") {
      if (factsPacer.offer(link.nodeId, frame) === "now") await applyFacts(link.nodeId, frame);
    } else {
      const slot = errorLines.take(link.nodeId);
      if (slot)
        log.warn(
          { nodeId: link.nodeId, code: frame.code, message: frame.message, ...(slot.suppressed > 0 ? { suppressed: slot.suppressed } : {}) },
          "host sent an error",
        );
    }
  }

  async function applyFacts(nodeId: string, frame: FactsFrame) {
    try {
      const result = await updateFacts(deps, nodeId, frame, { audit: factsAudit(nodeId), recompile: false });
      log.info({ nodeId, ...result }, "facts");
      if (result.profileChanged && recompilePacer.offer(nodeId, String(++profileChanges)) === "now") await recompileFacts(nodeId);
    } catch (err) {
      factsPacer.forget(nodeId);
      throw err;
    }
  }

  async function recompileFacts(nodeId: string) {
    const changed = await recompileForFacts(deps, nodeId, { audit: factsAudit(nodeId) });
    log.info({ nodeId, changed }, "recompiled for facts");
  }

  /**
   * Stores one report (with the others of its batch); its ack (sent once stored) also answers every
   * earlier report the pacer let a later one replace. One that could not be stored closes its link
   * unacked: no later ack may answer it, and the host sends what it holds again after it links again.
   */
  async function writeReport(nodeId: string, frame: ReportFrame, carried: CarriedDrift[] = []) {
    const carriedDrift = carried.map((c) => c.drift);
    const hasDrift = frame.report.drift.length > 0 || carriedDrift.length > 0;
    const driftEvent = hasDrift && driftEvents.take(nodeId);
    const suppressed = suppressedDrift.get(nodeId) ?? 0;
    const writer = links.get(nodeId);
    const hash = hashOf(frame);
    let written: boolean;
    // Set when the report came from a store older than the one stored: the ack tells the host.
    let storeBehind: number | undefined;
    try {
      written = await reports.write({
        nodeId,
        report: frame.report,
        hash,
        // This link stored (or found stored) another report: this one is known to differ, no read first.
        knownChanged: writer !== undefined && writer.storedReport !== undefined && writer.storedReport !== hash,
        opts: {
          driftEvent,
          suppressedDriftEvents: suppressed,
          carriedDrift,
          carriedFrom: Object.fromEntries(carried.map((c) => [c.drift.id, c.origin])),
          storeLostEvent: () => hostEvents.take(`${nodeId}\u0000node.store-lost`),
          storeBehind: (generation) => (storeBehind = generation),
        },
      });
    } catch (err) {
      pacer.forget(nodeId);
      if (writer) writer.storedReport = undefined;
      const link = links.get(nodeId);
      if (link) {
        log.warn({ nodeId, seq: frame.seq }, "report not stored; closing its link unacked (the host sends it again)");
        link.ws.close(1013, "report not stored; try again later");
      }
      throw err;
    }
    // Stored now, or found stored: what the database holds for this node (while this link is its link).
    if (writer && links.get(nodeId) === writer) writer.storedReport = hash;
    // A stored report wrote its own "last checked"; one found unchanged waits for the batched write.
    if (!written) checked.add(nodeId);
    (written ? metrics.reportsStored : metrics.reportsUnchanged).inc();
    if (hasDrift) {
      if (driftEvent) suppressedDrift.delete(nodeId);
      else suppressedDrift.set(nodeId, suppressed + 1);
    }
    const link = links.get(nodeId);
    if (link) send(link, { type: "ack", seq: frame.seq, ...(storeBehind !== undefined ? { storeGeneration: storeBehind } : {}) });
    if (storeBehind !== undefined)
      log.warn({ nodeId, reported: frame.report.storeGeneration, stored: storeBehind }, "report from a store older than the one stored: rolled back, so lost");
    log.debug({ nodeId, written, version: frame.report.declarationVersion }, "report");
    await finishRetirement(nodeId, frame);
  }

  /**
   * Completes a retirement on any report that qualifies (owning nothing), stored or found unchanged: a
   * failed attempt is retried with backoff while the node's link is held, and by its next report.
   * Only a retiring node can complete its retirement: asking for every report owning nothing was a
   * transaction per report of every node with an empty declaration. Without its link (the report was
   * flushed after the close) the gateway does not know, and asks.
   */
  const retirementRetries = new Set<string>();
  async function finishRetirement(nodeId: string, frame: ReportFrame, failures = 0): Promise<void> {
    const link = links.get(nodeId);
    if (frame.report.owned.length > 0 || (link && !link.retiring)) return;
    try {
      await completeRetirement(deps, nodeId, frame.report);
    } catch (err) {
      // One retry at a time per node: the reports that fail meanwhile would each start their own.
      if (retirementRetries.has(nodeId) && failures === 0) return;
      retirementRetries.add(nodeId);
      const delayMs = retryDelayMs(failures + 1);
      log.warn({ err, nodeId, failures: failures + 1, retryInMs: delayMs }, "could not complete the retirement; will retry");
      // Retried while this link is the node's (a later link's reports carry it on); a report flushed after the close is retried a few times.
      const retry = () => {
        retirementRetries.delete(nodeId);
        const now = links.get(nodeId);
        if (link ? now === link : failures < 5) onLinkQueue(nodeId, () => finishRetirement(nodeId, frame, failures + 1));
      };
      setTimeout(retry, delayMs).unref();
    }
  }

  function onConnection(ws: WebSocket, nodeId: string, publicKey: string, hostHas: number, hostVersion: string, hostFeatures: Set<string>, socket?: Duplex) {
    const previous = links.get(nodeId);
    if (previous) previous.ws.close(CloseCode.replaced, "replaced by a newer link");
    const link: Link = {
      nodeId,
      id: randomBytes(8).toString("hex"),
      ws,
      alive: true,
      queue: Promise.resolve(),
      inFlight: 0,
      inFlightBytes: 0,
      pauses: 0,
      overloaded: false,
      audited: linkEvents.take(nodeId),
      knownVersion: hostHas,
      reportedVersion: -1,
      socket,
      ready: false,
      publicKey,
      hostFeatures,
    };
    links.set(nodeId, link);
    // Another instance may have stored this node's reports meanwhile: compare with the database again.
    pacer.forget(nodeId);
    factsPacer.forget(nodeId);
    const enqueue = (fn: () => Promise<void>) => {
      link.queue = link.queue.then(fn).catch((err) => log.error({ err, nodeId }, "link handler failed"));
    };
    ws.on("pong", () => {
      link.alive = true;
    });
    ws.on("message", (data, isBinary) => {
      if (link.overloaded) return;
      link.alive = true; // a frame is as good as a pong
      const bytes = Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
      // Bounded work per link: past the bound the socket is paused (TCP pushes back on the host).
      if (link.inFlight >= HARD_FRAMES_IN_FLIGHT || link.inFlightBytes + bytes > hardBytesInFlight(framesInFlight)) {
        link.overloaded = true;
        log.warn({ nodeId, inFlight: link.inFlight, inFlightBytes: link.inFlightBytes }, "host floods its link; closing it");
        ws.close(CloseCode.overloaded, "too many frames in flight");
        return;
      }
      link.inFlight++;
      link.inFlightBytes += bytes;
      if ((link.inFlight >= framesInFlight || link.inFlightBytes >= framesInFlight * LIMITS.hostFrameBytes) && !ws.isPaused) {
        if (link.pauses++ === 0) log.warn({ nodeId, framesInFlight }, "link paused: frames come faster than they are handled");
        ws.pause();
      }
      enqueue(async () => {
        try {
          await handleFrame(link, data, isBinary);
        } finally {
          link.inFlight--;
          link.inFlightBytes -= bytes;
          if (ws.isPaused && link.inFlight < framesInFlight && link.inFlightBytes < framesInFlight * LIMITS.hostFrameBytes) ws.resume();
        }
      });
    });
    ws.on("error", (err) => log.warn({ nodeId, err: err.message }, "link error"));
    ws.on("close", (code, reason) => {
      if (links.get(nodeId) === link) links.delete(nodeId);
      log.info({ nodeId, code, reason: reason.toString(), ...(link.pauses > 0 ? { pauses: link.pauses } : {}) }, "link closed");
      // A report still waiting for its window is written now: the host's last word is never lost.
      enqueue(async () => {
        factsPacer.flush(nodeId);
        pacer.flush(nodeId);
      });
      // A link replaced by a newer one from the same node leaves the node connected.
      if (!links.has(nodeId)) enqueue(() => presence.disconnect({ nodeId, reason: `close ${code}`, audit: { audit: link.audited }, linkId: link.id }));
    });
    const suppressed = suppressedLinkEvents.get(nodeId) ?? 0;
    if (link.audited) suppressedLinkEvents.delete(nodeId);
    else suppressedLinkEvents.set(nodeId, suppressed + 1);
    enqueue(async () => {
      const connected = await presence
        .connect({
          nodeId,
          hostVersion,
          hostFeatures: [...hostFeatures],
          audit: { audit: link.audited, suppressed: link.audited ? suppressed : 0 },
          publicKey,
          linkId: link.id,
        })
        .catch((err) => {
          // The database could not take it (after retries): the host links again later, rather than being
          // held here while its node says it is not.
          log.warn({ err, nodeId }, "could not mark the node connected; closing its link");
          link.ws.close(1013, "try again later");
          return null;
        });
      if (connected === null) return;
      if (!connected) {
        // Revoked, retired or re-keyed between the handshake and now: its close notice may have come before this link existed.
        log.info({ nodeId }, "node revoked or re-keyed while its link came up; closing it");
        link.ws.close(CloseCode.revoked, "node revoked or re-keyed");
        setTimeout(() => link.ws.terminate(), 1000).unref();
        return;
      }
      link.ready = true;
      // Retried until it is sent or the link goes: a database error here must not leave the host behind.
      await pusher.pushNodeOrRetry(link, hostHas);
    });
    log.info({ nodeId, hostHas }, "link up");
  }

  const heartbeat = setInterval(() => {
    pacer.sweep();
    factsPacer.sweep();
    recompilePacer.sweep();
    for (const link of links.values()) {
      // A paused link cannot have its pong read: its host is not dead, we are behind.
      if (link.ws.isPaused) continue;
      if (!link.alive) {
        log.info({ nodeId: link.nodeId }, "no pong; terminating link");
        link.ws.terminate();
        continue;
      }
      link.alive = false;
      link.ws.ping();
    }
  }, options.pingIntervalMs ?? 15_000);
  heartbeat.unref();

  // "Last checked" for every node whose report came unchanged: one statement per interval, none when
  // no report came. (No last_seen flush: a connected node's last seen is this gateway's heartbeat.)
  const flushChecked = () => {
    const ids = [...checked];
    checked.clear();
    return (
      touchLastChecked(deps, ids)
        // Rows a recompile holds locked now are touched at the next flush.
        .then((skipped) => skipped.forEach((nodeId) => checked.add(nodeId)))
        .catch((err) => log.warn({ err }, "last checked flush failed"))
    );
  };
  const flush = setInterval(flushChecked, options.lastCheckedFlushMs ?? 60_000);
  flush.unref();

  // A node id: that node changed. "*": any number changed; the links held are compared with the database.
  // After a gap (the bus's connection was lost and is back) every link is compared: what was missed is made up.
  const unsubscribeDeclarations = await bus.subscribe(
    CHANNELS.declaration,
    (payload) => {
      // One at a time: a burst of changes is caught up by the next one, which reads after the last commit.
      if (payload === MANY_NODES) return catchUp.all();
      const link = links.get(payload);
      if (link) pusher.pushNodeQueued(link);
    },
    {
      onGap: () => {
        metrics.busGaps.inc({ channel: CHANNELS.declaration });
        log.warn({ links: links.size }, "the change bus may have missed notifications; comparing every link with the database");
        catchUp.all();
      },
    },
  );
  // Revoked, retired or re-enrolled: whichever instance holds the link closes it now.
  const unsubscribeLinks = await bus.subscribe(
    CHANNELS.link,
    (payload) => {
      const [nodeId, reason] = payload.split(" ");
      // A bulk revoke or forget: one notice for any number of nodes; every held link is checked.
      if (nodeId === MANY_NODES) return recheckLinks();
      const link = nodeId ? links.get(nodeId) : undefined;
      if (link) closeHeldLink(link, reason);
    },
    // A close notice missed while the bus was away: every held link is checked against its node.
    {
      onGap: () => {
        metrics.busGaps.inc({ channel: CHANNELS.link });
        recheckLinks();
      },
    },
  );

  // Reconcile now: one notice per call names its audit event; the links held here of its nodes are sent the frame.
  const deliverReconcile = createReconcileDelivery({
    db: deps.db,
    log,
    links: () => links,
    send: (link, frame) => {
      const held = link as Link;
      if (held.ready) send(held, frame);
    },
  });
  const unsubscribeReconcile = await bus.subscribe(CHANNELS.reconcile, (payload) => {
    deliverReconcile(payload).catch((err) => log.warn({ err, payload }, "could not deliver a reconcile request"));
  });

  let shuttingDown = false;
  /** After a gap on the link channel: links of nodes revoked, retired or re-keyed meanwhile are closed (lookups batched). */
  function recheckLinks(failures = 0) {
    if (shuttingDown) return;
    const held = [...links.values()];
    Promise.all(held.map(async (link) => [link, await lookupNode(link.nodeId)] as const))
      .then((found) => {
        let closed = 0;
        for (const [link, node] of found) {
          if (links.get(link.nodeId) !== link) continue;
          const reason =
            !node || stateRefusal(node.state) ? (node?.state === "retired" ? "retired" : "revoked") : node.publicKey !== link.publicKey ? "replaced" : null;
          if (reason) closeHeldLink(link, reason), closed++;
        }
        log.info({ links: held.length, closed }, "links checked after a gap on the change bus");
      })
      .catch((err) => {
        const delayMs = retryDelayMs(failures + 1);
        log.warn({ err, retryInMs: delayMs }, "could not check links after a gap on the change bus; will retry");
        setTimeout(() => recheckLinks(failures + 1), delayMs).unref();
      });
  }

  function closeHeldLink(link: Link, reason: string | undefined) {
    const nodeId = link.nodeId;
    log.info({ nodeId, reason }, "closing link");
    if (reason === "retired") {
      link.queue = link.queue.then(() => {
        send(link, { type: "retired", nodeId: link.nodeId });
        link.ws.close(CloseCode.retired, "node retired");
      });
    } else if (reason === "replaced") {
      link.ws.close(CloseCode.replaced, "node re-enrolled with a new key");
    } else {
      link.ws.close(CloseCode.revoked, "node revoked");
      // A revoked host gets no grace: drop the socket even if it does not answer the close.
      setTimeout(() => link.ws.terminate(), 1000).unref();
    }
  }

  const heartbeatMs = options.heartbeatMs ?? 5_000;
  // A gateway is dead after this much silence: many beats, and never under 30 s, so a
  // busy event loop or a slow pool (a large push) on the other instance is not death.
  const staleMs = options.staleMs ?? Math.max(heartbeatMs * SWEEP_BEATS, MIN_STALE_MS);
  const stopBeat = await startGatewayBeat({
    deps,
    log,
    gatewayId: id,
    heartbeatMs,
    staleMs,
    heldLinks: () => [...links.values()].map((l) => ({ nodeId: l.nodeId, linkId: l.id })),
  });

  return {
    id,
    handleUpgrade(req, socket, head, onSettled) {
      socket.on("error", () => {});
      // A host admitted at its challenge presents that challenge's nonce: its turn, not charged again.
      // Any other upgrade (another instance's nonce, an expired pass, no credential) asks the admission
      // here; past it the host is told when to come back, before any signature check or query.
      const parsed = parseAuthHeader(req);
      let done: HandshakeDone | undefined = passes.redeem(parsed.ok ? parsed.auth.nonce : undefined);
      if (!done) {
        const turn = admit(req.socket.remoteAddress);
        if (!turn.admitted) {
          onSettled?.();
          refuseUpgrade(socket, linkRefusal("busy", ADMITTING), turn.retryAfterSeconds);
          return;
        }
        done = turn.done;
      }
      const end = done;
      const settled = () => {
        end(true);
        onSettled?.();
      };
      authenticateLink(deps.db, challenges, req, lookupNode, parsed)
        .then((result) => {
          settled();
          if (!result.ok) {
            // Anyone can be refused: the log lines are budgeted per address key.
            const slot = refusedLinks.take(addressKey(req.socket.remoteAddress));
            if (slot)
              log.warn(
                {
                  status: result.refusal.status,
                  code: result.refusal.body.error,
                  reason: result.refusal.body.message,
                  address: req.socket.remoteAddress,
                  ...(slot.suppressed > 0 ? { suppressed: slot.suppressed } : {}),
                },
                "link refused",
              );
            refuseUpgrade(socket, result.refusal);
            return;
          }
          // A host reconnecting in a loop is told when to come back, before any write or push.
          const connect = connects.attempt(result.node.id);
          if (!connect.allowed) {
            const slot = errorLines.take(`${result.node.id}\u0000connect`);
            if (slot)
              log.warn(
                { nodeId: result.node.id, retryAfterMs: connect.retryAfterMs, ...(slot.suppressed > 0 ? { suppressed: slot.suppressed } : {}) },
                "node reconnects too often; told to wait",
              );
            refuseUpgrade(socket, linkRefusal("reconnecting-too-often"), Math.ceil(connect.retryAfterMs / 1000));
            return;
          }
          const hostFeatures = new Set([...parseFeatures(req.headers[HOST_FEATURES_HEADER])].filter((f) => KNOWN_HOST_FEATURES.has(f)));
          wss.handleUpgrade(req, socket, head, (ws) =>
            onConnection(ws, result.node.id, result.node.publicKey, result.auth.declarationVersion, result.auth.hostVersion, hostFeatures, socket),
          );
        })
        .catch((err) => {
          settled();
          // The database is down or slow: the host is told so, and when to come back (it honours Retry-After).
          const unavailable = asMeshError(err);
          if (unavailable?.code === "DATABASE_UNAVAILABLE") {
            const slot = errorLines.take("\u0000database");
            if (slot)
              log.warn(
                { code: (err as { cause?: { code?: unknown } }).cause?.code, ...(slot.suppressed > 0 ? { suppressed: slot.suppressed } : {}) },
                "link refused: the database cannot answer",
              );
            refuseUpgrade(socket, linkRefusal("unavailable", unavailable.message), unavailable.retryAfterSeconds);
            return;
          }
          log.error({ err }, "link authentication failed");
          refuseUpgrade(socket, linkRefusal("unavailable"));
        });
    },
    handleChallenge(req, res) {
      // The handshake's first request is where it is admitted: past the rate or the bound on
      // handshakes in flight, answered at once (no nonce, no HMAC) with its turn; admitted, its
      // nonce is its pass through the upgrade (handshake-passes.ts).
      const turn = admit(req.socket.remoteAddress);
      if (!turn.admitted) {
        const refusal = linkRefusal("busy", ADMITTING);
        res.writeHead(refusal.status, { "content-type": "application/json", "cache-control": "no-store", "retry-after": String(turn.retryAfterSeconds) });
        res.end(JSON.stringify(refusal.body));
        return;
      }
      const challenge = challenges.issue();
      passes.hold(challenge.nonce, turn.done);
      res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
      res.end(JSON.stringify(challenge));
    },
    connectedNodes: () => [...links.keys()],
    localPush: {
      committed(rows) {
        if (shuttingDown) return;
        // Only links that are up (a link still linking gets its declaration read at link-up).
        const held = new Map<string, PushLink>();
        for (const row of rows) {
          const link = links.get(row.nodeId);
          if (link?.ready && link.ws.readyState === link.ws.OPEN) held.set(row.nodeId, link);
        }
        // The send loop yields to the event loop as it goes (SEND_SLICE_LINKS): the save answers its caller meanwhile.
        if (held.size > 0)
          void pusher
            .pushCommitted(held, rows)
            .catch((err) => log.warn({ err }, "local push of committed declarations failed; the notification's path sends them"));
      },
    },
    async close() {
      clearInterval(heartbeat);
      clearInterval(flush);
      stopBeat();
      shuttingDown = true;
      await unsubscribeDeclarations();
      await catchUp.close();
      await unsubscribeLinks();
      await unsubscribeReconcile();
      factsPacer.flushAll();
      recompilePacer.flushAll();
      pacer.flushAll();
      const closing = [...links.values()].map((l) => l.queue);
      for (const link of links.values()) link.ws.close(1001, "control plane shutting down");
      await Promise.allSettled(closing);
      // Reports released by the pacers after their link closed are written before the gateway goes.
      await reports.flush().catch((err) => log.warn({ err }, "could not write reports"));
      await presence.flush().catch((err) => log.warn({ err }, "could not write link transitions"));
      await flushChecked();
      await retireGateway(deps, id).catch((err) => log.warn({ err }, "could not hand back nodes"));
    },
  };
}
