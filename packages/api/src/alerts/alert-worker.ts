// Runs the evaluator and the delivery worker on a timer in every instance (both are safe to run
// anywhere at once: see evaluate-alerts.ts and deliver-alerts.ts), and the roles' revoke-when-offline
// sweep (once per control plane under its lease: services/revoke-offline.ts). A failed run is logged and the
// next tick tries again; stopping waits for the run in progress.
import type { Deps } from "../deps";
import { createAlertEvaluator } from "./evaluate-alerts";
import { deliverAlerts } from "./deliver-alerts";
import { revokeOfflineNodes } from "../services/revoke-offline";

export interface AlertWorkerOptions {
  intervalMs?: number;
  retryBaseMs?: number;
  /** How often the revoke-when-offline policy is swept, across all instances (default 30 s). */
  revokeOfflineEveryMs?: number;
}

export function startAlertWorker(deps: Pick<Deps, "db" | "log" | "grants">, opts: AlertWorkerOptions = {}): () => Promise<void> {
  const intervalMs = opts.intervalMs ?? 5_000;
  // Another instance evaluated less than most of an interval ago: this tick only delivers.
  const evaluate = createAlertEvaluator(deps, { minIntervalMs: Math.floor(intervalMs * 0.8) });
  let stopped = false;
  let running: Promise<void> | null = null;
  const revokeEveryMs = opts.revokeOfflineEveryMs ?? 30_000;
  const tick = async () => {
    // Each on its own: an evaluation that fails does not hold back what is already owed, nor the reverse.
    // The policy first: the revocation it audits is in this tick's evaluation when the two meet.
    try {
      await revokeOfflineNodes(deps, { minIntervalMs: revokeEveryMs });
    } catch (err) {
      deps.log.warn({ err }, "revoke-offline sweep failed; trying again next tick");
    }
    try {
      await evaluate();
    } catch (err) {
      deps.log.warn({ err }, "alert evaluation failed; trying again next tick");
    }
    try {
      await deliverAlerts(deps, { retryBaseMs: opts.retryBaseMs });
    } catch (err) {
      deps.log.warn({ err }, "alert delivery failed; trying again next tick");
    }
  };
  const timer = setInterval(() => {
    // One run at a time in an instance: a slow run is not joined by the next tick's.
    if (stopped || running) return;
    running = tick().finally(() => (running = null));
  }, intervalMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
}
