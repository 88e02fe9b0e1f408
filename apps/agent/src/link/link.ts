// The link to the control plane: connect, hold, and reconnect with backoff for
// as long as the host runs. Frames are parsed here; what they mean is the host's business.
import type { KeyObject } from "node:crypto";
import type WebSocket from "ws";
import {
  AGENT_PATH,
  CloseCode,
  FEATURE,
  FEATURES_HEADER,
  LIMITS,
  ReportFrame,
  ServerFrame,
  type Declaration,
  FactsFrame,
  type Profile,
  type Inventory,
  type ReconcileFrame,
  describeZodError,
} from "@mesh/protocol";
import type { OutboxSend } from "../reports/outbox";
import type { Logger } from "../log";
import { reasonOf } from "../host-error";
import { systemClock, type Clock } from "../clock";
import { sleep } from "../sleep";
import { LinkRefused, authHeaderValue, endpoint, fetchChallenge, signChallenge } from "./auth";
import { Backoff, reconnectDelay, timedOutAgainstLiveServer } from "./backoff";
import { openSocket } from "./connect";
import { describeTrustFailure, type Trust } from "./trust";
import { Heartbeat } from "./heartbeat";
import { describeReachFailure } from "./not-mesh";

export interface LinkEvents {
  /** The declaration version held, sent in the auth frame. */
  declarationVersion(): number;
  onOpen(): void;
  onClose(): void;
  onDeclaration(declaration: Declaration): void;
  /** A declaration frame that failed validation; version when it could be read. */
  onRejectedDeclaration(version: number | undefined, reason: string): void;
  /** storeGeneration: the control plane holds a newer store generation than the report's (see AckFrame). */
  onAck(seq: number, storeGeneration?: number): void;
  /** The control plane revoked this node: its key is refused from now on. */
  onRevoked(reason: string): void;
  /** The node was retired: the host forgets its identity. */
  onRetired(): void;
  /** Reconcile now, correcting or accepting the drift the frame names. */
  onReconcile(frame: ReconcileFrame): void;
}

export interface LinkOptions {
  controlPlaneUrl: string;
  /** TLS trust for every connection (the pin taken at enrolment). */
  trust?: Trust;
  nodeId: string;
  privateKey: KeyObject;
  hostVersion: string;
  log: Logger;
  timeoutMs: number;
  backoff?: Backoff;
  /** A link up this long resets the backoff. */
  stableMs?: number;
  /** A revoked node tries again this seldom (default 1 h), and says so at most once per hour. */
  revokedRetryMs?: number;
  /** Time and timers: the backoff's waits, the heartbeat, the stable-link reset (the real clock by default). */
  clock?: Clock;
}

/** How seldom a revoked host knocks again, and logs that it is still refused. */
export const REVOKED_RETRY_MS = 60 * 60_000;

export class Link {
  private socket: WebSocket | null = null;
  private stopped = false;
  /** What the control plane of the current link said it reads (FEATURES_HEADER on its 101 answer). */
  private features = new Set<string>();
  /** Ends the wait before the next attempt (stop). */
  private readonly waking = new AbortController();
  private loop: Promise<void> | null = null;
  private readonly abort = new AbortController();
  private connecting: WebSocket | null = null;
  private readonly backoff: Backoff;
  /** Refused as revoked since the last accepted link: wait long, log seldom. */
  private revoked = false;
  private revokedLoggedAt = -Infinity;
  private readonly clock: Clock;

  constructor(
    private readonly opts: LinkOptions,
    private readonly events: LinkEvents,
  ) {
    this.clock = opts.clock ?? systemClock;
    this.backoff = opts.backoff ?? new Backoff({ now: () => this.clock.now() });
  }

  get connected(): boolean {
    return this.socket !== null;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    this.waking.abort();
    this.connecting?.terminate();
    this.socket?.close(1001, "host stopping");
    await this.loop;
  }

  /** Send the machine's facts; false when there is no link (the next connect tries again). */
  sendFacts(profile: Profile, inventory: Inventory): boolean {
    const ws = this.socket;
    if (!ws) return false;
    const frame = FactsFrame.safeParse({ type: "facts", profile, inventory });
    if (!frame.success) {
      this.opts.log.error({ issues: describeZodError(frame.error) }, "facts do not fit the protocol; not sent");
      return false;
    }
    ws.send(JSON.stringify(frame.data));
    return true;
  }

  /**
   * Send a report as its sequence (the ack answers it and every one before it); false when there is
   * no link (the outbox sends it again on the next). Its origin goes only to a control plane that reads it.
   */
  send(item: OutboxSend): boolean {
    const ws = this.socket;
    if (!ws) return false;
    // Fields an older control plane does not know (its frames are strict) go only where it said it reads them.
    let report = item.origin && this.features.has(FEATURE.reportOrigin) ? { ...item.report, origin: item.origin } : item.report;
    if (report.storeGeneration !== undefined && !this.features.has(FEATURE.storeGeneration)) {
      const { storeGeneration: _unread, ...rest } = report;
      report = rest;
    }
    const frame = ReportFrame.safeParse({ type: "report", seq: item.sequence, report });
    if (!frame.success) {
      this.opts.log.error({ seq: item.sequence, issues: describeZodError(frame.error) }, "report does not fit the protocol; not sent");
      return false;
    }
    const text = JSON.stringify(frame.data);
    // The gateway closes a link for a frame past its limit: one such report would close every link after.
    if (Buffer.byteLength(text) > LIMITS.hostFrameBytes) {
      this.opts.log.error({ seq: item.sequence, bytes: Buffer.byteLength(text) }, "report is larger than a frame may be; not sent");
      return false;
    }
    ws.send(text);
    return true;
  }

  private async run(): Promise<void> {
    const { log } = this.opts;
    while (!this.stopped) {
      let waitAsked = 0;
      let challengeAnswered = false;
      let liveServer = false;
      try {
        const challenge = await fetchChallenge(this.opts.controlPlaneUrl, this.opts.trust, this.abort.signal);
        challengeAnswered = true;
        const auth = signChallenge({
          nodeId: this.opts.nodeId,
          nonce: challenge.nonce,
          privateKey: this.opts.privateKey,
          declarationVersion: this.events.declarationVersion(),
          hostVersion: this.opts.hostVersion,
        });
        if (this.stopped) break;
        let heartbeat: Heartbeat | null = null;
        const ws = await openSocket(endpoint(this.opts.controlPlaneUrl, AGENT_PATH, "ws"), authHeaderValue(auth), this.opts.trust, (w) => {
          this.connecting = w;
          heartbeat = this.prepare(w);
        }).finally(() => {
          this.connecting = null;
        });
        await this.hold(ws, heartbeat!);
      } catch (err) {
        if (this.stopped) break;
        // The refusal's code says what to do; any other refusal (no known code: an older control plane,
        // a proxy's error page) is retried with backoff and its Retry-After, and logged with its status.
        if (err instanceof LinkRefused && err.code === "node-retired") {
          log.warn({ status: err.status, code: err.code, reason: err.message }, "link refused: node retired");
          this.events.onRetired();
        } else if (err instanceof LinkRefused && err.code === "node-revoked") {
          // Revoked: nothing will change soon; try again seldom (an admin may undo it) while reconciling locally.
          this.revoked = true;
          this.logRevoked({ status: err.status, code: err.code, reason: err.message });
          this.events.onRevoked(err.message);
        } else if (err instanceof LinkRefused) {
          waitAsked = err.retryAfterMs ?? 0;
          log.warn(
            {
              status: err.status,
              ...(err.code ? { code: err.code } : {}),
              reason: err.message,
              ...(err.retryAfterMs !== undefined ? { retryAfterMs: err.retryAfterMs } : {}),
            },
            "link refused",
          );
        } else {
          liveServer = timedOutAgainstLiveServer(err, challengeAnswered);
          log.warn(
            {
              reason: describeTrustFailure(err, this.opts.trust) ?? describeReachFailure(this.opts.controlPlaneUrl, err),
              ...(liveServer ? { liveServer } : {}),
            },
            "link failed",
          );
        }
      }
      if (this.stopped) break;
      // A control plane that says when to come back (Retry-After) is not asked sooner, nor much
      // later: its turn, spread over a second or more among the hosts told the same (backoff.ts). One
      // that accepted the connection but did not answer in time is there and busy: a short window.
      const delay = this.revoked ? this.revokedDelay() : reconnectDelay(this.backoff, { retryAfterMs: waitAsked, liveServer });
      log.debug({ delayMs: delay }, "reconnecting after backoff");
      await sleep(delay, { clock: this.clock, signal: this.waking.signal });
    }
  }

  private revokedDelay(): number {
    const every = this.opts.revokedRetryMs ?? REVOKED_RETRY_MS;
    // Spread by up to a tenth, so that a fleet revoked together does not knock together.
    return Math.floor(every * (1 + Math.random() / 10));
  }

  /** Once per hour at most: a revoked host retrying for days says so 24 times a day, not 3,000. */
  private logRevoked(fields: Record<string, unknown>): void {
    const now = this.clock.now();
    if (now - this.revokedLoggedAt < REVOKED_RETRY_MS) return;
    this.revokedLoggedAt = now;
    this.opts.log.warn(
      { ...fields, retryEveryMs: this.opts.revokedRetryMs ?? REVOKED_RETRY_MS },
      "link refused: node revoked; reconciling the last declaration locally and trying again hourly",
    );
  }

  /** Listeners that must be on the socket before it opens (see openSocket). */
  private prepare(ws: WebSocket): Heartbeat {
    const heartbeat = new Heartbeat(this.clock, this.opts.timeoutMs, () => {
      this.opts.log.warn({ timeoutMs: this.opts.timeoutMs }, "link silent; reconnecting");
      ws.terminate();
    });
    ws.once("upgrade", (res) => {
      const value = res.headers[FEATURES_HEADER];
      this.features = new Set(
        (Array.isArray(value) ? value.join(",") : (value ?? ""))
          .split(",")
          .map((f) => f.trim())
          .filter(Boolean),
      );
    });
    ws.on("ping", () => heartbeat.beat());
    ws.on("pong", () => heartbeat.beat());
    ws.on("message", (data) => {
      heartbeat.beat();
      this.handle(Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer));
    });
    return heartbeat;
  }

  private hold(ws: WebSocket, heartbeat: Heartbeat): Promise<void> {
    const { log } = this.opts;
    return new Promise<void>((resolve) => {
      this.socket = ws;
      const stable = this.clock.setTimeout(() => this.backoff.reset(), this.opts.stableMs ?? 10_000);
      heartbeat.beat();
      ws.on("error", (err) => log.warn({ reason: err.message }, "link error"));
      ws.once("close", (code, reason) => {
        heartbeat.stop();
        this.clock.clearTimeout(stable);
        this.socket = null;
        if (code === CloseCode.revoked) {
          this.revoked = true;
          this.logRevoked({ code });
          this.events.onRevoked(reason.toString("utf8").slice(0, 200) || "node revoked");
        }
        if (code === CloseCode.retired) this.events.onRetired();
        log.info({ code, reason: reason.toString("utf8").slice(0, 200) }, "link down");
        this.events.onClose();
        resolve();
      });
      if (ws.readyState === ws.CLOSED) {
        // Closed between open and here: the close event is already gone.
        heartbeat.stop();
        this.clock.clearTimeout(stable);
        this.socket = null;
        resolve();
        return;
      }
      log.info({}, "link up");
      this.revoked = false;
      this.revokedLoggedAt = -Infinity;
      try {
        this.events.onOpen();
      } catch (err) {
        log.error({ reason: reasonOf(err) }, "link up handler failed");
      }
    });
  }

  private handle(raw: Buffer): void {
    const { log } = this.opts;
    let data: unknown;
    try {
      data = JSON.parse(raw.toString("utf8"));
    } catch {
      log.warn({ bytes: raw.length }, "unparseable frame from the control plane; ignored");
      return;
    }
    const parsed = ServerFrame.safeParse(data);
    if (!parsed.success) {
      const obj = data as { type?: unknown; declaration?: { version?: unknown } } | null;
      if (obj && typeof obj === "object" && obj.type === "declaration") {
        const v = obj.declaration?.version;
        const version = typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined;
        this.events.onRejectedDeclaration(version, describeZodError(parsed.error));
      } else {
        log.warn({ issues: describeZodError(parsed.error) }, "frame from the control plane does not fit the protocol; ignored");
      }
      return;
    }
    const frame = parsed.data;
    switch (frame.type) {
      case "declaration":
        this.events.onDeclaration(frame.declaration);
        return;
      case "ack":
        this.events.onAck(frame.seq, frame.storeGeneration);
        return;
      case "error":
        log.warn({ code: frame.code, message: frame.message }, "control plane reported an error");
        return;
      case "retired":
        log.info({}, "control plane says this node is retired");
        this.events.onRetired();
        return;
      case "reconcile":
        this.events.onReconcile(frame);
        return;
    }
  }
}
