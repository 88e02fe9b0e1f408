// One simulated host: links with the agent's own challenge signing and backoff,
// answers every declaration with a report carrying the declared version, and sends the
// same (unchanged) report again on the host's reconcile timer, as mesh-host does.
import WebSocket from "ws";
import type { KeyObject } from "node:crypto";
import { AGENT_PATH, AUTH_HEADER, CHALLENGE_PATH, LIMITS, ServerFrame } from "@mesh/protocol";
import { signChallenge, authHeaderValue, retryAfterMs } from "@mesh/agent/src/link/auth";
import { Backoff, reconnectDelay, timedOutAgainstLiveServer } from "@mesh/agent/src/link/backoff";
import { NoAnswerInTime } from "@mesh/agent/src/link/control-plane-http";
import http from "node:http";

export interface SimEvents {
  /** A declaration frame arrived (wall-clock ms, version). */
  declaration(nodeId: string, version: number, at: number): void;
  linked(nodeId: string, at: number): void;
  unlinked(nodeId: string): void;
  attempt(nodeId: string): void;
  failure(nodeId: string, reason: string): void;
}

/** mesh-host reconciles (and reports) every 300 s; BENCH_REPORT_S overrides it, 0 turns timer reports off. */
const REPORT_MS = Number(process.env.BENCH_REPORT_S ?? 300) * 1000;

export class SimNode {
  version = 0;
  private seq = 0;
  private ws: WebSocket | null = null;
  private stopped = false;
  private readonly backoff = new Backoff();

  constructor(
    readonly nodeId: string,
    private readonly key: KeyObject,
    private readonly base: string,
    private readonly localAddress: string,
    private readonly events: SimEvents,
  ) {}

  get linked(): boolean {
    return this.ws?.readyState === WebSocket.OPEN;
  }

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.ws?.terminate();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let waitMs: number | undefined;
      let liveServer = false;
      let reason = "challenge";
      try {
        this.events.attempt(this.nodeId);
        const res = await this.challenge();
        if (res.status !== 200) {
          waitMs = res.retryAfter;
          throw new Error(`challenge ${res.status}`);
        }
        reason = "upgrade";
        const challenge = JSON.parse(res.body) as { nonce: string };
        const auth = signChallenge({
          nodeId: this.nodeId,
          nonce: challenge.nonce,
          privateKey: this.key,
          declarationVersion: this.version,
          hostVersion: "0.0.0-sim",
        });
        await this.hold(authHeaderValue(auth), (ms) => (waitMs = ms));
      } catch (err) {
        // refused or dropped: back off as the host does (a timeout against a live control plane: its short window)
        liveServer = timedOutAgainstLiveServer(err, reason === "upgrade");
        const message = (err as Error).message ?? String(err);
        this.events.failure(
          this.nodeId,
          /^(challenge|upgrade) \d+/.test(message)
            ? message
            : `${reason}: ${err instanceof NoAnswerInTime || /timeout|timed out/i.test(message) ? "timeout" : /ECONNREFUSED/.test(message) ? "refused" : /ECONNRESET|socket hang up/.test(message) ? "reset" : message.slice(0, 40)}`,
        );
      }
      if (this.stopped) return;
      // The host's own rule: its backoff, the server's Retry-After with the host's jitter, or the live window.
      const delay = reconnectDelay(this.backoff, { retryAfterMs: waitMs, liveServer });
      await new Promise((r) => setTimeout(r, delay));
    }
  }

  /** GET the challenge from this node's source address (a timeout says whether the connection was accepted, as the host's does). */
  private challenge(): Promise<{ status: number; body: string; retryAfter?: number }> {
    return new Promise((resolve, reject) => {
      let connected = false;
      const req = http.get(this.base + CHALLENGE_PATH, { localAddress: this.localAddress, timeout: 15_000, agent: false }, (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (body.length < 65536 ? (body += d) : undefined));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, retryAfter: retryAfterMs(res.headers["retry-after"]) }));
        res.on("error", reject);
      });
      req.once("socket", (socket) => {
        if (!socket.connecting) connected = true;
        else socket.once("connect", () => (connected = true));
      });
      req.on("timeout", () => req.destroy(new NoAnswerInTime(new URL(this.base).host, connected)));
      req.on("error", reject);
    });
  }

  private hold(authHeader: string, retryAfter: (ms: number | undefined) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      const url = this.base.replace(/^http/, "ws") + AGENT_PATH;
      const ws = new WebSocket(url, {
        headers: { [AUTH_HEADER]: authHeader },
        perMessageDeflate: false,
        maxPayload: LIMITS.frameBytes,
        handshakeTimeout: 15_000,
        localAddress: this.localAddress,
      });
      this.ws = ws;
      let opened = false;
      let stable: NodeJS.Timeout | undefined;
      let timer: NodeJS.Timeout | undefined;
      const report = () =>
        ws.send(
          JSON.stringify({
            type: "report",
            seq: ++this.seq,
            report: {
              declarationVersion: this.version,
              owned: [],
              drift: [],
              errors: [],
              skipped: [],
              storeLost: false,
              reconciledAt: new Date().toISOString(),
            },
          }),
        );
      ws.on("error", (err) => (opened ? undefined : reject(err)));
      ws.once("unexpected-response", (_req, res) => {
        retryAfter(retryAfterMs(res.headers["retry-after"]));
        // The refusal's own words (which bound refused it) go into the failure's reason.
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (d: string) => (body.length < 512 ? (body += d) : undefined));
        res.on("end", () => {
          ws.terminate();
          let message = "";
          try {
            message = String((JSON.parse(body) as { message?: unknown }).message ?? "").slice(0, 48);
          } catch {}
          reject(new Error(`upgrade ${res.statusCode}${message ? ` (${message})` : ""}`));
        });
        res.on("error", () => reject(new Error(`upgrade ${res.statusCode}`)));
      });
      ws.once("open", () => {
        opened = true;
        // As the host's link does: the backoff starts from the base again once a link stayed up 10 s.
        stable = setTimeout(() => this.backoff.reset(), 10_000);
        // The timer's phase is random per host, so a fleet's timer reports arrive spread out.
        if (REPORT_MS > 0)
          timer = setTimeout(function tick() {
            if (ws.readyState === WebSocket.OPEN) report();
            timer = setTimeout(tick, REPORT_MS);
          }, Math.random() * REPORT_MS);
        this.events.linked(this.nodeId, Date.now());
      });
      ws.on("message", (data) => {
        const at = Date.now();
        const parsed = ServerFrame.safeParse(JSON.parse(String(data)));
        if (!parsed.success || parsed.data.type !== "declaration") return;
        const version = parsed.data.declaration.version;
        this.version = version;
        this.events.declaration(this.nodeId, version, at);
        report();
      });
      ws.once("close", () => {
        clearTimeout(stable);
        clearTimeout(timer);
        if (!opened) return reject(new Error("closed before open"));
        this.events.unlinked(this.nodeId);
        resolve();
      });
    });
  }
}
