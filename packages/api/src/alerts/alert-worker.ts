// Runs the evaluator and the delivery worker on a timer in every instance (both are safe to run
// anywhere at once: see evaluate-alerts.ts and deliver-alerts.ts). A failed run is logged and the
// next tick tries again; stopping waits for the run in progress.
import type { Deps } from "../deps";
import { createAlertEvaluator } from "./evaluate-alerts";
import { deliverAlerts } from "./deliver-alerts";

export interface AlertWorkerOptions {
  intervalMs?: number;
  retryBaseMs?: number;
}

export function startAlertWorker(deps: Pick<Deps, "db" | "log" | "grants">, opts: AlertWorkerOptions = {}): () => Promise<void> {
  const intervalMs = opts.intervalMs ?? 5_000;
  // Another instance evaluated less than most of an interval ago: this tick only delivers.
  const evaluate = createAlertEvaluator(deps, { minIntervalMs: Math.floor(intervalMs * 0.8) });
  let stopped = false;
  let running: Promise<void> | null = null;
  const tick = async () => {
    // Each on its own: an evaluation that fails does not hold back what is already owed, nor the reverse.
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
