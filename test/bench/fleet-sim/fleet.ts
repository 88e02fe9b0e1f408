// The simulated fleet: a few worker processes, each on its own loopback source
// address (127.0.0.2, .3, ...), holding the links; tracks who is linked and what each node received.
import { fork, type ChildProcess } from "node:child_process";
import path from "node:path";
import type { FromWorker, ToWorker, WorkerMessage } from "./messages";

export interface Identity {
  nodeId: string;
  privateKeyPem: string;
}

export class Fleet {
  private readonly workers: ChildProcess[] = [];
  /** The worker processes' ids (their CPU is the simulator's share). */
  get pids(): number[] {
    return this.workers.map((w) => w.pid!).filter((p) => p !== undefined);
  }
  readonly linked = new Set<string>();
  /** Latest declaration version each node received, and when. */
  readonly received = new Map<string, { version: number; at: number }>();
  attempts = 0;
  /** Attempts that did not become a link, by reason. */
  readonly failures = new Map<string, number>();
  /** When each link opened (wall-clock ms), in arrival order. */
  readonly linkTimes: number[] = [];
  private waiters: (() => void)[] = [];
  private rssReplies: ((kb: number) => void)[] = [];

  constructor(readonly workerCount: number) {
    for (let i = 0; i < workerCount; i++) {
      const child = fork(path.join(import.meta.dirname, "worker.ts"), [], { execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
      child.on("message", (m: WorkerMessage) => this.onMessage(m));
      this.workers.push(child);
    }
  }

  localAddress(i: number): string {
    return `127.0.0.${2 + (i % 250)}`;
  }

  link(base: string, identities: Identity[]): void {
    const per = Math.ceil(identities.length / this.workers.length);
    this.workers.forEach((w, i) => {
      const nodes = identities.slice(i * per, (i + 1) * per);
      if (nodes.length) w.send({ type: "link", base, localAddress: this.localAddress(i), nodes } satisfies ToWorker);
    });
  }

  /** Resolves when `test` holds, checked after every batch of events. */
  until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== check);
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`));
      }, timeoutMs);
      const check = () => {
        if (!test()) return;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== check);
        resolve();
      };
      this.waiters.push(check);
    });
  }

  /** The failures counted since `since` (a copy of `failures` taken earlier), most frequent first. */
  failuresSince(since: Map<string, number> = new Map()): string {
    const rows = [...this.failures].map(([r, n]) => [r, n - (since.get(r) ?? 0)] as const).filter(([, n]) => n > 0);
    return (
      rows
        .sort((a, b) => b[1] - a[1])
        .map(([r, n]) => `${r} ${n.toLocaleString("en")}`)
        .join(", ") || "none"
    );
  }

  /** Total RSS of the worker processes, in KiB. */
  async rssKb(): Promise<number> {
    const replies = this.workers.map(() => new Promise<number>((r) => this.rssReplies.push(r)));
    for (const w of this.workers) w.send({ type: "rss" } satisfies ToWorker);
    return (await Promise.all(replies)).reduce((a, b) => a + b, 0);
  }

  private onMessage(m: WorkerMessage): void {
    if (m.type === "rss") {
      this.rssReplies.shift()?.(m.kb);
      return;
    }
    for (const e of m.events) this.apply(e);
    for (const w of [...this.waiters]) w();
  }

  private apply(e: FromWorker): void {
    if (e.type === "attempt") this.attempts++;
    else if (e.type === "failure") this.failures.set(e.reason, (this.failures.get(e.reason) ?? 0) + 1);
    else if (e.type === "linked") {
      this.linked.add(e.nodeId);
      this.linkTimes.push(e.at);
    } else if (e.type === "unlinked") this.linked.delete(e.nodeId);
    else {
      const prev = this.received.get(e.nodeId);
      if (!prev || e.version >= prev.version) this.received.set(e.nodeId, { version: e.version, at: e.at });
    }
  }

  /** Stops every worker; kills any that does not leave within 5 s. */
  async stop(): Promise<void> {
    await Promise.all(
      this.workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.exitCode !== null || w.signalCode !== null) return resolve();
            const t = setTimeout(() => w.kill("SIGKILL"), 5_000);
            w.once("exit", () => {
              clearTimeout(t);
              resolve();
            });
            try {
              w.send({ type: "stop" } satisfies ToWorker);
            } catch {
              w.kill("SIGKILL");
            }
          }),
      ),
    );
  }

  /** Synchronous last resort on process exit. */
  killAll(): void {
    for (const w of this.workers) if (w.exitCode === null) w.kill("SIGKILL");
  }
}
