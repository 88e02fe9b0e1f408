// The enrolled host: holds the link, keeps the last good declaration, runs the
// reconcile loop, sends a report after every reconcile and keeps status.json current.
import type { KeyObject } from "node:crypto";
import type { Declaration, Report } from "@mesh/protocol";
import type { Logger } from "./log";
import { reasonOf } from "./host-error";
import { Link } from "./link/link";
import { ReconcileLoop, type Trigger } from "./reconcile/loop";
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
import { OWNERSHIP_KEY, emptyOwnership, saveOwnership } from "./store/ownership";
import type { SelfUpgrade } from "./self-upgrade/self-upgrade";
import { ReportOutbox } from "./reports/outbox";

/** How long an upgraded host waits for the control plane to acknowledge its last report before it exits anyway. */
const UPGRADE_ACK_WAIT_MS = 5_000;

export interface HostOptions {
  store: Store;
  root: Root;
  identity: Identity;
  privateKey: KeyObject;
  intervalMs: number;
  linkTimeoutMs: number;
  hostVersion: string;
  log: Logger;
  backoff?: Backoff;
  /** Applies a `host` resource; the daemon exits after the report that follows. */
  selfUpgrade?: SelfUpgrade | null;
  /** Called on every accepted link (an upgrade on trial is kept once the control plane is reached). */
  onLinkUp?: () => void;
}

export class Host {
  private held: Declaration | null = null;
  private rejected: { version?: number; reason: string } | null = null;
  private lastReport: Report | null = null;
  private lastResult: StatusFile["lastReconcileResult"] = null;
  /** Seq of the first report that said storeLost; an ack at or past it ends the saying. */
  private lostSeq: number | null = null;
  private lostAcked = false;
  private declarationWrites: Promise<void> = Promise.resolve();
  private statusWrites: Promise<void> = Promise.resolve();
  private readonly loop: ReconcileLoop;
  private readonly link: Link;
  private readonly log: Logger;
  /** Set once the control plane revoked this node: it keeps its last declaration, reachable by nothing. */
  private revoked: string | null = null;
  private retiring: Promise<void> | null = null;
  private onRetiredDone: (() => void) | null = null;
  /** Resolves when the node was retired and its identity forgotten: the daemon goes back to hosted. */
  readonly retired = new Promise<void>((resolve) => (this.onRetiredDone = resolve));
  private onUpgradedDone: (() => void) | null = null;
  /** Resolves after a self-upgrade was reported: the daemon exits 0 and the supervisor starts the new binary. */
  readonly upgraded = new Promise<void>((resolve) => (this.onUpgradedDone = resolve));
  private ackWaiter: { seq: number; resolve: () => void } | null = null;
  /** Reports kept until the control plane says it stored them (opened by start). */
  private outbox: ReportOutbox | null = null;

  constructor(private readonly opts: HostOptions) {
    this.log = opts.log;
    this.loop = new ReconcileLoop((t) => this.reconcileNow(t), { intervalMs: opts.intervalMs, log: this.log });
    this.link = new Link(
      {
        controlPlaneUrl: opts.identity.controlPlaneUrl,
        trust: opts.identity.trust,
        nodeId: opts.identity.nodeId,
        privateKey: opts.privateKey,
        hostVersion: opts.hostVersion,
        log: this.log,
        timeoutMs: opts.linkTimeoutMs,
        backoff: opts.backoff,
      },
      {
        declarationVersion: () => this.held?.version ?? 0,
        onOpen: () => {
          // Accepted by the control plane: whatever refused us before is over.
          this.revoked = null;
          if (this.opts.identity.awaitingApproval) {
            saveApproved(this.opts.store, this.opts.identity).then(
              (approved) => {
                this.opts.identity = approved;
                this.log.info({}, "replacement approved: this key is the node's now");
              },
              (err) => this.log.warn({ err: String(err) }, "could not record the approval in the identity"),
            );
          }
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
        onAck: (seq) => {
          this.outbox?.acknowledge(seq).catch((err) => this.log.warn({ seq, reason: reasonOf(err) }, "could not drop acknowledged reports"));
          if (this.ackWaiter && seq >= this.ackWaiter.seq) this.ackWaiter.resolve();
          if (this.lostSeq !== null && seq >= this.lostSeq) this.lostAcked = true;
        },
        onRevoked: (reason) => {
          if (!this.revoked) this.log.warn({ reason }, "this node is revoked: keeping its last declaration, with no link");
          this.revoked = reason;
          this.writeStatus();
        },
        onRetired: () => {
          this.retiring ??= this.forget();
        },
      },
    );
  }

  async start(): Promise<void> {
    this.held = await loadHeldDeclaration(this.opts.store, this.log);
    this.outbox = await ReportOutbox.open(this.opts.store, this.log);
    const waiting = this.outbox.pending().length;
    if (waiting > 0) this.log.info({ reports: waiting }, "reports not yet acknowledged; sent again once linked");
    this.log.info({ hostVersion: this.opts.hostVersion, declarationVersion: this.held?.version ?? 0, controlPlane: this.opts.identity.controlPlaneUrl }, "host starting");
    this.loop.start();
    this.link.start();
  }

  async stop(): Promise<void> {
    await this.link.stop();
    await this.declarationWrites;
    await this.loop.stop();
    this.writeStatus();
    await this.statusWrites;
  }

  /** For tests: resolves once no reconcile is running or queued. */
  idle(): Promise<void> {
    return this.loop.idle();
  }

  get connected(): boolean {
    return this.link.connected;
  }

  /**
   * Retired: stop, then forget the identity, the key, the held declaration and
   * the store (the final declaration already removed or released what it owned).
   * The machine-id stays: the control plane can tell this machine was a node before
   * (a retired node is history; enrolling again makes a new node).
   */
  private async forget(): Promise<void> {
    this.log.info({}, "retired: forgetting this node's identity; back to hosted");
    await this.link.stop();
    await this.declarationWrites;
    await this.loop.stop();
    await this.statusWrites;
    for (const key of [KEYS.identity, KEYS.privateKey, KEYS.declaration, KEYS.status, KEYS.reportOutbox, OWNERSHIP_KEY]) await this.opts.store.remove(key);
    this.onRetiredDone?.();
  }

  /** Profile and inventory go again only when their hash moved since last sent. */
  private async sendFactsIfChanged(): Promise<void> {
    try {
      const facts = await collectFacts(this.opts.root.dir, this.opts.store);
      if (facts.hash === (await readSentFactsHash(this.opts.store))) return;
      if (this.link.sendFacts(facts.profile, facts.inventory)) {
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
      try {
        await saveHeldDeclaration(this.opts.store, declaration);
      } catch (err) {
        this.log.error({ version: declaration.version, reason: reasonOf(err) }, "cannot keep the new declaration; keeping the old one");
        return;
      }
      this.held = declaration;
      this.rejected = null;
      this.log.info({ version: declaration.version, resources: declaration.resources.length }, "new declaration");
      this.loop.trigger("declaration");
    });
  }

  private get controlPlane() {
    const { identity, privateKey } = this.opts;
    return { url: identity.controlPlaneUrl, nodeId: identity.nodeId, privateKey, trust: identity.trust };
  }

  private async reconcileNow(triggers: Trigger[]): Promise<void> {
    const clearLost = this.lostAcked;
    const rejected = this.rejected;
    try {
      // Retired with keepResources: drop ownership, leave the machine as it is.
      if (this.held?.final === "forget") await saveOwnership(this.opts.store, emptyOwnership());
      const outcome = await reconcile(
        { store: this.opts.store, root: this.opts.root, log: this.log, enrolled: true, controlPlane: this.controlPlane, selfUpgrade: this.opts.selfUpgrade ?? null },
        {
          declaration: this.held,
          extraErrors: rejected
            ? [{ id: null, message: `declaration${rejected.version !== undefined ? ` v${rejected.version}` : ""} rejected: ${rejected.reason}`.slice(0, 1024) }]
            : [],
          rejectedVersion: rejected?.version,
          clearLost,
        },
      );
      const { report } = outcome;
      this.lastReport = report;
      this.lastResult = report.errors.length ? "errors" : "ok";
      if (clearLost && !report.storeLost) {
        this.lostAcked = false;
        this.lostSeq = null;
      }
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
      // Kept (durably) before it is sent; sent with every older one the control plane has not acknowledged.
      const item = await this.outbox!.add(report);
      let sent = false;
      for (const waiting of this.outbox!.pending()) sent = this.link.send(waiting);
      if (report.storeLost && this.lostSeq === null) this.lostSeq = item.sequence;
      if (this.opts.selfUpgrade?.staged) void this.exitForUpgrade(sent ? item.sequence : null);
    } catch (err) {
      this.lastResult = "failed";
      this.log.error({ triggers, reason: reasonOf(err) }, "reconcile failed");
    } finally {
      this.writeStatus();
    }
  }

  /** The report that followed the upgrade is sent; once acknowledged (or after a short wait), the daemon exits. */
  private async exitForUpgrade(seq: number | null): Promise<void> {
    if (seq !== null) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          this.log.warn({ seq, waitedMs: UPGRADE_ACK_WAIT_MS }, "no ack for the report after the upgrade; exiting anyway");
          resolve();
        }, UPGRADE_ACK_WAIT_MS);
        this.ackWaiter = {
          seq,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        };
      });
    }
    this.onUpgradedDone?.();
  }

  private writeStatus(): void {
    const r = this.lastReport;
    const status: StatusFile = {
      state: this.revoked ? "revoked" : "enrolled",
      nodeId: this.opts.identity.nodeId,
      controlPlaneUrl: this.opts.identity.controlPlaneUrl,
      connected: this.link.connected,
      declarationVersion: r?.declarationVersion ?? 0,
      owned: r?.owned.length ?? 0,
      drift: r?.drift.length ?? 0,
      errors: r?.errors.length ?? 0,
      storeLost: r?.storeLost ?? false,
      lastReconcileAt: r?.reconciledAt ?? null,
      lastReconcileResult: this.lastResult,
      hostVersion: this.opts.hostVersion.slice(0, 64),
      pid: process.pid,
      updatedAt: new Date().toISOString(),
    };
    this.statusWrites = this.statusWrites
      .then(() => writeStatusFile(this.opts.store, status))
      .catch((err) => this.log.error({ reason: reasonOf(err) }, "cannot write status.json"));
  }
}
