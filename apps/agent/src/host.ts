// The enrolled host: holds the link, keeps the last good declaration, runs the
// reconcile loop, sends a report after every reconcile and keeps status.json current.
// With a damaged identity it has no link but keeps reconciling what it holds (never "hosted").
import type { KeyObject } from "node:crypto";
import { LIMITS, type Declaration, type Report, type ResourceError } from "@mesh/protocol";
import type { Logger } from "./log";
import { reasonOf } from "./host-error";
import { Link } from "./link/link";
import { ReconcileLoop, type RetryTiming, type RunResult, type Trigger } from "./reconcile/loop";
import { isoNow, systemClock, type Clock } from "./clock";
import {
  NOT_LOST,
  RUNNING,
  initialStanding,
  lifeOn,
  lostOnAck,
  lostOnReconciled,
  lostOnReport,
  lostSince,
  standingOnLinkUp,
  standingOnRevoked,
  type Life,
  type LostStore,
  type Standing,
} from "./host-states";
import { checkDeclaration } from "./reconcile/declaration-check";
import { reconcile } from "./reconcile/reconcile";
import type { Root } from "./resources/root";
import { loadHeldDeclaration, saveHeldDeclaration } from "./state-dir/held-declaration";
import { saveApproved, type Identity } from "./state-dir/identity";
import { writeStatusFile, type StatusFile } from "./state-dir/status-file";
import type { Store } from "./store/store";
import type { Backoff } from "./link/backoff";
import { KEYS } from "./state-dir/keys";
import { collectFacts, readSentFactsHash, writeSentFactsHash } from "./machine/facts";
import { ACCEPTED_KEY } from "./store/accepted-drift";
import { OWNERSHIP_KEY } from "./store/ownership";
import { GenerationCheck } from "./store/generation-check";
import type { SelfUpgrade } from "./self-upgrade/self-upgrade";
import { ReportOutbox, type OutboxSend } from "./reports/outbox";
import { DriftWatch } from "./reconcile/drift-watch";
import { ReconcileRequests, requestProblems, type ReconcileRequest, type RequestResult } from "./reconcile/requests";

/** How long an upgraded host waits for the control plane to acknowledge its last report before it exits anyway. */
const UPGRADE_ACK_WAIT_MS = 5_000;

export interface HostOptions {
  store: Store;
  root: Root;
  /** Null with `damaged`: identity.json or node.key cannot be used, so there is no link. */
  identity: Identity | null;
  privateKey: KeyObject | null;
  /** What is wrong with the identity (then the host reconciles what it holds, without a link). */
  damaged?: string;
  intervalMs: number;
  linkTimeoutMs: number;
  hostVersion: string;
  log: Logger;
  backoff?: Backoff;
  /** Applies a `host` resource; the daemon exits after the report that follows. */
  selfUpgrade?: SelfUpgrade | null;
  /** Called on every accepted link (an upgrade on trial is kept once the control plane is reached). */
  onLinkUp?: () => void;
  /** Watch what the host owns and reconcile within seconds of a change (default on); false: the timer only. */
  driftWatch?: false | { quietMs?: number; maxDelayMs?: number };
  /** How long a revoked host waits between link attempts (default 1 h). */
  revokedRetryMs?: number;
  /** Time and timers for the loop, the link and the upgrade's wait (the real clock by default; tests use fake timers). */
  clock?: Clock;
  /** When a failed reconcile is tried again (reconcile/loop.ts DEFAULT_RETRY by default). */
  reconcileRetry?: RetryTiming;
  /** A reconcile still running after this long is aborted and reported as failed (DEFAULT_DEADLINE_MS by default). */
  reconcileDeadlineMs?: number;
}

export class Host {
  private held: Declaration | null = null;
  private rejected: { version?: number; reason: string } | null = null;
  private lastReport: Report | null = null;
  private lastResult: StatusFile["lastReconcileResult"] = null;
  /** Whether reports say the store was lost, and whether the control plane acknowledged it (host-states.ts). */
  private lost: LostStore = NOT_LOST;
  private declarationWrites: Promise<void> = Promise.resolve();
  private statusWrites: Promise<void> = Promise.resolve();
  private readonly loop: ReconcileLoop;
  private readonly link: Link | null;
  private readonly log: Logger;
  /** Whether the store acted on is the one the control plane last acknowledged (a restored backup is not). */
  private readonly generations = new GenerationCheck();
  /** A declaration received but not yet kept in the state dir (a full disk): applied once kept. */
  private pending: Declaration | null = null;
  /** Writes of the host's own state that failed, by what was written: said in every report and in status. */
  private readonly stateErrors = new Map<"declaration" | "status", string>();
  /** Running, stopping, or retiring (host-states.ts). */
  private life: Life = RUNNING;
  /** Enrolled, damaged, or revoked by the control plane: then it keeps its last declaration, reachable by nothing. */
  private standing: Standing;
  private onRetiredDone: (() => void) | null = null;
  /** Resolves when the node was retired and its identity forgotten: the daemon goes back to hosted. */
  readonly retired = new Promise<void>((resolve) => (this.onRetiredDone = resolve));
  private onUpgradedDone: (() => void) | null = null;
  /** Resolves after a self-upgrade was reported: the daemon exits 0 and the supervisor starts the new binary. */
  readonly upgraded = new Promise<void>((resolve) => (this.onUpgradedDone = resolve));
  private ackWaiter: { seq: number; resolve: () => void } | null = null;
  /**
   * Set once a run saw the binary replaced (or a `host` release staged): the report is the last, the
   * exit happens once however many triggers see the replacement, and no run starts after it.
   */
  private exitingForUpgrade = false;
  /**
   * The newest report sequence the control plane acknowledged in this run (an ack answers it and every
   * one before it): the ack of the report after an upgrade may come before the host knows it is leaving.
   */
  private ackedThrough = -1;
  /** Reports kept until the control plane says it stored them (opened by start). */
  private outbox: ReportOutbox | null = null;
  /** Reconcile now, from the link or the local socket: served by the next run. */
  private readonly requests = new ReconcileRequests();
  private readonly watch: DriftWatch | null;
  private readonly clock: Clock;

  constructor(private readonly opts: HostOptions) {
    this.log = opts.log;
    this.clock = opts.clock ?? systemClock;
    this.standing = initialStanding(opts.damaged);
    this.loop = new ReconcileLoop((t, signal) => this.reconcileNow(t, signal), {
      intervalMs: opts.intervalMs,
      log: this.log,
      clock: this.clock,
      retry: opts.reconcileRetry,
      deadlineMs: opts.reconcileDeadlineMs,
    });
    this.watch =
      opts.driftWatch === false
        ? null
        : new DriftWatch({ rootDir: opts.root.dir, log: this.log, clock: this.clock, ...opts.driftWatch, onDrift: () => this.loop.trigger("watch") });
    this.link = opts.identity && opts.privateKey ? this.makeLink(opts.identity, opts.privateKey) : null;
  }

  private makeLink(identity: Identity, privateKey: KeyObject): Link {
    const opts = this.opts;
    return new Link(
      {
        controlPlaneUrl: identity.controlPlaneUrl,
        trust: identity.trust,
        nodeId: identity.nodeId,
        privateKey,
        hostVersion: opts.hostVersion,
        log: this.log,
        timeoutMs: opts.linkTimeoutMs,
        backoff: opts.backoff,
        revokedRetryMs: opts.revokedRetryMs,
        clock: this.clock,
      },
      {
        declarationVersion: () => this.held?.version ?? 0,
        onOpen: () => {
          // Accepted by the control plane: whatever refused us before is over.
          this.standing = standingOnLinkUp(this.standing);
          if (this.opts.identity?.awaitingApproval) {
            saveApproved(this.opts.store, this.opts.identity).then(
              (approved) => {
                this.opts.identity = approved;
                this.log.info({}, "replacement approved: this key is the node's now");
              },
              (err) => this.log.warn({ err: String(err) }, "could not record the approval in the identity"),
            );
          }
          // What waits for an ack now may be stored already: only a report first sent on this link vouches for the store.
          this.generations.linkUp(this.outbox?.pending().at(-1)?.sequence ?? -1);
          this.opts.onLinkUp?.();
          this.writeStatus();
          // Re-observe and report at once on every (re)connect.
          this.loop.trigger("reconnect");
          void this.sendFactsIfChanged();
        },
        onClose: () => this.writeStatus(),
        onDeclaration: (d) => this.receive(d),
        onRejectedDeclaration: (version, reason) => {
          this.log.warn({ version, reason }, "declaration rejected; keeping the one held");
          this.rejected = { version, reason };
          this.loop.trigger("rejected");
        },
        onAck: (seq, storeGeneration) => {
          this.outbox?.acknowledge(seq).catch((err) => this.log.warn({ seq, reason: reasonOf(err) }, "could not drop acknowledged reports"));
          this.ackedThrough = Math.max(this.ackedThrough, seq);
          if (this.ackWaiter && seq >= this.ackWaiter.seq) this.ackWaiter.resolve();
          this.lost = lostOnAck(this.lost, seq);
          if (this.generations.acknowledged(seq, storeGeneration, lostSince(this.lost))) {
            this.log.warn({ storeGeneration }, "the control plane stored a newer store generation than this store's: it was rolled back");
            this.loop.trigger("store");
          }
        },
        onRevoked: (reason) => {
          if (this.standing.kind !== "revoked") this.log.warn({ reason }, "this node is revoked: keeping its last declaration, with no link");
          this.standing = standingOnRevoked(this.standing, reason);
          this.writeStatus();
        },
        onRetired: () => {
          if (this.life.kind === "retiring") return;
          this.life = lifeOn(this.life, "retired");
          void this.forget();
        },
        onReconcile: (frame) => {
          const { type: _type, ...request } = frame;
          void this.requestReconcile(request);
        },
      },
    );
  }

  async start(): Promise<void> {
    this.held = await loadHeldDeclaration(this.opts.store, this.log);
    this.outbox = await ReportOutbox.open(this.opts.store, this.log);
    const waiting = this.outbox.pending().length;
    if (waiting > 0) this.log.info({ reports: waiting }, "reports not yet acknowledged; sent again once linked");
    if (this.opts.damaged) {
      this.log.error(
        { problem: this.opts.damaged, declarationVersion: this.held?.version ?? 0 },
        "identity damaged: reconciling the held declaration without a link; re-enrol to recover (`mesh-host enrol URL --token T` keeps the store)",
      );
    } else {
      this.log.info(
        { hostVersion: this.opts.hostVersion, declarationVersion: this.held?.version ?? 0, controlPlane: this.opts.identity?.controlPlaneUrl },
        "host starting",
      );
    }
    this.loop.start();
    this.link?.start();
  }

  /**
   * Reconcile now (a `reconcile` frame, or `mesh-host reconcile` on the machine): one run of the held
   * declaration as soon as the loop is free, folded with any already queued; resolves with its result.
   */
  requestReconcile(request: ReconcileRequest): Promise<RequestResult> {
    if (this.life.kind !== "running") return Promise.resolve({ ok: false, error: "the host is stopping" });
    if (this.exitingForUpgrade) return Promise.resolve({ ok: false, error: "the host is exiting for an upgrade: the new binary reconciles once it starts" });
    this.log.info({ reason: request.reason, correct: request.correct?.length ?? 0, accept: request.accept?.length ?? 0 }, "reconcile asked for");
    const result = this.requests.add(request);
    this.loop.trigger("request");
    return result;
  }

  async stop(): Promise<void> {
    this.life = lifeOn(this.life, "stop");
    this.watch?.close();
    this.loop.holdRetries();
    await this.link?.stop();
    await this.declarationWrites;
    await this.loop.stop();
    this.requests.abandon("the host stopped before reconciling");
    this.writeStatus();
    await this.statusWrites;
  }

  /** For tests: resolves once no declaration is being kept and no reconcile is running or queued. */
  async idle(): Promise<void> {
    await this.declarationWrites;
    await this.loop.idle();
  }

  get connected(): boolean {
    return this.link?.connected ?? false;
  }

  /**
   * Retired: stop, then forget the identity, the key, the held declaration and
   * the store (the final declaration already removed or released what it owned).
   * The machine-id stays: the control plane can tell this machine was a node before
   * (a retired node is history; enrolling again makes a new node).
   */
  private async forget(): Promise<void> {
    this.log.info({}, "retired: forgetting this node's identity; back to hosted");
    this.watch?.close();
    this.loop.holdRetries();
    await this.link?.stop();
    await this.declarationWrites;
    await this.loop.stop();
    this.requests.abandon("the node was retired");
    await this.statusWrites;
    for (const key of [KEYS.identity, KEYS.privateKey, KEYS.declaration, KEYS.status, KEYS.reportOutbox, OWNERSHIP_KEY, ACCEPTED_KEY])
      await this.opts.store.remove(key);
    this.onRetiredDone?.();
  }

  /** Profile and inventory go again only when their hash moved since last sent. */
  private async sendFactsIfChanged(): Promise<void> {
    try {
      const facts = await collectFacts(this.opts.root.dir, this.opts.store);
      if (facts.hash === (await readSentFactsHash(this.opts.store))) return;
      if (this.link?.sendFacts(facts.profile, facts.inventory)) {
        await writeSentFactsHash(this.opts.store, facts.hash);
        this.log.info({ packages: facts.inventory.packages.length }, "facts sent (changed since last sent)");
      }
    } catch (err) {
      this.log.warn({ reason: reasonOf(err) }, "could not collect the machine's facts");
    }
  }

  private receive(declaration: Declaration): void {
    // Written in arrival order, each durably before the reconcile that uses it.
    this.declarationWrites = this.declarationWrites.then(async () => {
      const held = this.held?.version ?? -1;
      if (this.pending && declaration.version < this.pending.version) return;
      if (declaration.version <= held && this.held) {
        this.log.debug({ version: declaration.version, held }, "declaration not newer than the one held; ignored");
        return;
      }
      // Refused as a whole when a path leaves the root: the held declaration stays in force.
      const problems = await checkDeclaration(declaration, this.opts.root);
      if (problems.length) {
        const reason = problems.slice(0, 3).join("; ") + (problems.length > 3 ? `; and ${problems.length - 3} more` : "");
        this.log.warn({ version: declaration.version, reason }, "declaration refused; keeping the one held");
        this.rejected = { version: declaration.version, reason };
        this.loop.trigger("rejected");
        return;
      }
      this.pending = declaration;
      if (await this.keepPending()) this.loop.trigger("declaration");
      // Not kept: said in the report that follows at once, and tried again by the loop's backoff until it is.
      else this.loop.trigger("retry");
    });
  }

  /**
   * Writes the declaration received but not yet kept; applied only once it is durable, so that a
   * host restarted on a full disk never acts on a declaration it has forgotten. True once kept.
   */
  private async keepPending(): Promise<boolean> {
    const declaration = this.pending;
    if (!declaration) return false;
    try {
      await saveHeldDeclaration(this.opts.store, declaration);
    } catch (err) {
      const reason = reasonOf(err);
      if (!this.stateErrors.has("declaration"))
        this.log.error({ version: declaration.version, reason }, "cannot keep the new declaration in the state dir; the held one stays in force, retrying");
      this.stateErrors.set(
        "declaration",
        `state dir: cannot keep declaration v${declaration.version} (${reason}); v${this.held?.version ?? 0} stays in force until it is kept`,
      );
      return false;
    }
    if (this.pending === declaration) this.pending = null;
    if (this.stateErrors.delete("declaration")) this.log.info({ version: declaration.version }, "the new declaration is kept now");
    this.held = declaration;
    this.rejected = null;
    this.log.info({ version: declaration.version, resources: declaration.resources.length }, "new declaration");
    return true;
  }

  private stateErrorList(): ResourceError[] {
    return [...this.stateErrors.values()].map((message) => ({ id: null, message: message.slice(0, LIMITS.message) }));
  }

  private get controlPlane() {
    const { identity, privateKey } = this.opts;
    if (!identity || !privateKey) return null;
    return { url: identity.controlPlaneUrl, nodeId: identity.nodeId, privateKey, trust: identity.trust };
  }

  /**
   * One run of the loop. "failed" (the run could not finish, or a write of the host's own state failed)
   * and "errors" (some resources failed) have the loop try again by its backoff, not at the next interval.
   */
  private async reconcileNow(triggers: Trigger[], signal: AbortSignal): Promise<RunResult> {
    // Leaving for the new binary: a trigger that came since (a timer, a drift, a reconnect) starts no run.
    if (this.exitingForUpgrade) {
      this.requests.abandon("the host is exiting for an upgrade: the new binary reconciles once it starts");
      return "ok";
    }
    const clearLost = this.lost.kind === "acked";
    // A declaration not kept yet (a full disk) is tried again first, in order with those arriving.
    if (this.pending) {
      this.declarationWrites = this.declarationWrites.then(() => this.keepPending().then(() => undefined));
      await this.declarationWrites;
    }
    const rejected = this.rejected;
    const generations = this.generations.input();
    // Asked for now: served by this run (asked during it: by the next).
    const asked = this.requests.take();
    // Changes to owned paths during the run are judged at its end: its own writes start no reconcile.
    this.watch?.hold();
    let changed: string[] | null = null;
    try {
      const outcome = await reconcile(
        {
          store: this.opts.store,
          root: this.opts.root,
          log: this.log,
          enrolled: true,
          controlPlane: this.controlPlane,
          selfUpgrade: this.opts.selfUpgrade ?? null,
          clock: this.clock,
          signal,
        },
        {
          declaration: this.held,
          extraErrors: [
            ...(rejected
              ? [
                  {
                    id: null,
                    message: `declaration${rejected.version !== undefined ? ` v${rejected.version}` : ""} rejected: ${rejected.reason}`.slice(0, 1024),
                  },
                ]
              : []),
            ...this.stateErrorList(),
            ...(asked ? requestProblems(asked, this.held).map((message) => ({ id: null, message: message.slice(0, LIMITS.message) })) : []),
          ],
          rejectedVersion: rejected?.version,
          clearLost,
          ...generations,
          // Retired with keepResources: drop ownership, leave the machine as it is.
          forget: this.held?.final === "forget",
          ...(asked ? { correct: asked.correct, accept: asked.accept } : {}),
        },
      );
      changed = outcome.changes.map((c) => c.subject);
      this.watch?.follow(outcome.subjects);
      const { report } = outcome;
      this.generations.reconciled(generations, outcome);
      this.lastReport = report;
      this.lastResult = report.errors.length ? "errors" : "ok";
      this.lost = lostOnReconciled(this.lost, clearLost, report.storeLost);
      this.log.info(
        {
          triggers,
          declarationVersion: report.declarationVersion,
          owned: report.owned.length,
          drift: report.drift.length,
          errors: report.errors.length,
          changes: outcome.changes.length,
        },
        "reconciled",
      );
      for (const e of report.errors) this.log.warn({ id: e.id, message: e.message }, "resource error");
      asked?.settle({ ok: true, report, changes: outcome.changes, unchanged: outcome.unchanged });
      const { item, sent } = await this.sendReport(report);
      this.lost = lostOnReport(this.lost, report.storeLost, item.sequence);
      // A `host` resource put a new binary in place, or a package did (its own `package` resource, an
      // operator's apt upgrade): this report is the last; the supervisor starts the new binary.
      const upgrade = this.opts.selfUpgrade;
      if (upgrade && !this.exitingForUpgrade && (upgrade.staged || (await upgrade.replacedOnDisk()))) {
        this.exitingForUpgrade = true;
        // No retry of this run's errors: the supervisor starts the new binary, which reconciles.
        this.loop.holdRetries();
        void this.exitForUpgrade(sent ? item.sequence : null);
      }
    } catch (err) {
      this.lastResult = "failed";
      this.log.error({ triggers, reason: reasonOf(err) }, "reconcile failed");
      asked?.settle({ ok: false, error: reasonOf(err) });
      this.reportFailure(reasonOf(err));
    } finally {
      this.watch?.release(changed);
      this.writeStatus();
    }
    if (this.stateErrors.size > 0 || this.lastResult === "failed") return "failed";
    return this.lastResult === "errors" ? "errors" : "ok";
  }

  /**
   * A reconcile that could not finish (its store cannot be written: a full disk) still reports,
   * so the control plane never reads silence as all being well: what was last observed, with the
   * failure and every state write that failed as errors.
   */
  private reportFailure(reason: string): void {
    const last = this.lastReport;
    const report: Report = {
      declarationVersion: last?.declarationVersion ?? 0,
      owned: last?.owned ?? [],
      drift: last?.drift ?? [],
      errors: [
        { id: null, message: `reconcile failed (owned and drift are as last observed): ${reason}`.slice(0, LIMITS.message) },
        ...this.stateErrorList(),
      ].slice(0, LIMITS.reportErrors),
      skipped: [],
      storeLost: last?.storeLost ?? false,
      ...(last?.storeGeneration !== undefined ? { storeGeneration: last.storeGeneration } : {}),
      reconciledAt: isoNow(this.clock),
    };
    void this.sendReport(report).catch((err) => this.log.warn({ reason: reasonOf(err) }, "could not send the failure report"));
  }

  /**
   * Kept (durably) before it is sent, then sent with every older one the control plane has not
   * acknowledged (reports/outbox.ts); each carries the store generation this process vouches for.
   */
  private async sendReport(report: Report): Promise<{ item: OutboxSend; sent: boolean }> {
    const item = await this.outbox!.add(report);
    let sent = false;
    if (this.link)
      for (const waiting of this.outbox!.pending())
        sent = this.link.send({ ...waiting, report: this.generations.forSending(waiting.report, this.connected, waiting.sequence) });
    return { item, sent };
  }

  /**
   * The report that followed the upgrade is sent; once acknowledged (or after a short wait), the daemon exits.
   * Its ack may have come already: noticing a package's new binary (dpkg-query, hashing it for the trial)
   * takes longer than the control plane takes to store a report.
   */
  private async exitForUpgrade(seq: number | null): Promise<void> {
    if (seq !== null && this.ackedThrough < seq) {
      await new Promise<void>((resolve) => {
        const t = this.clock.setTimeout(() => {
          this.log.warn({ seq, waitedMs: UPGRADE_ACK_WAIT_MS }, "no ack for the report after the upgrade; exiting anyway");
          resolve();
        }, UPGRADE_ACK_WAIT_MS);
        this.ackWaiter = {
          seq,
          resolve: () => {
            this.clock.clearTimeout(t);
            resolve();
          },
        };
      });
    }
    this.onUpgradedDone?.();
  }

  private writeStatus(): void {
    const r = this.lastReport;
    const stateErrors = [...this.stateErrors.entries()].filter(([what]) => what !== "status").map(([, message]) => message);
    const status: StatusFile = {
      state: this.standing.kind,
      nodeId: this.opts.identity?.nodeId ?? null,
      controlPlaneUrl: this.opts.identity?.controlPlaneUrl ?? null,
      connected: this.connected,
      declarationVersion: r?.declarationVersion ?? 0,
      owned: r?.owned.length ?? 0,
      drift: r?.drift.length ?? 0,
      errors: r?.errors.length ?? 0,
      storeLost: r?.storeLost ?? false,
      lastReconcileAt: r?.reconciledAt ?? null,
      lastReconcileResult: this.lastResult,
      hostVersion: this.opts.hostVersion.slice(0, 64),
      pid: process.pid,
      updatedAt: isoNow(this.clock),
      ...(this.opts.damaged ? { problem: this.opts.damaged.slice(0, LIMITS.message) } : {}),
      ...(stateErrors.length ? { stateErrors } : {}),
    };
    this.statusWrites = this.statusWrites
      .then(() => writeStatusFile(this.opts.store, status))
      .then(
        () => {
          if (!this.stateErrors.delete("status")) return;
          // Said in a report: the control plane hears the error is over, not at the next timer.
          this.log.info({}, "status.json is written again");
          this.loop.trigger("retry");
        },
        (err) => {
          const reason = reasonOf(err);
          if (!this.stateErrors.has("status")) this.log.error({ reason }, "cannot write status.json; retrying");
          this.stateErrors.set("status", `state dir: cannot write status.json (${reason})`);
          this.loop.retryLater();
        },
      );
  }
}
