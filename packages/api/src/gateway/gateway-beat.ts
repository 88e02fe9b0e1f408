// The gateway's own heartbeat: it says it is alive, claims back the links it holds when its row was
// swept or the database comes back, and sweeps the instances that died, on the database's clock.
import type { Deps } from "../deps";
import type { Logger } from "../log";
import { beatGateway, reassertLinks, sweepDeadGateways } from "../services/presence";
import { BeatRun } from "./beat-run";

export interface GatewayBeatOptions {
  deps: Pick<Deps, "db">;
  log: Logger;
  gatewayId: string;
  heartbeatMs: number;
  /** Silence after which another gateway is dead, counted only while this one beat without a break. */
  staleMs: number;
  /** The links this gateway holds now: node → link. */
  heldLinks: () => Array<{ nodeId: string; linkId: string }>;
}

/** Beats once (the caller waits: a gateway exists in the database before it takes links), then every heartbeat. Returns stop. */
export async function startGatewayBeat(options: GatewayBeatOptions): Promise<() => void> {
  const { deps, log, gatewayId, heartbeatMs, staleMs, heldLinks } = options;
  // Three intervals without a beat on the database's clock break the run. Not two: a beat is skipped while
  // the last one is still running, so a database slower than one interval puts good beats two apart, and
  // a run broken at every beat would never sweep a dead instance.
  const run = new BeatRun(3 * heartbeatMs);
  run.beat((await beatGateway(deps, gatewayId)).at);
  let beating = false;
  // Set when the links must be claimed back; cleared only once that write went through.
  let reassertDue = false;
  const timer = setInterval(() => {
    // One beat at a time: beats queued behind a slow database do not pile up.
    if (beating) return;
    beating = true;
    (async () => {
      let beat;
      try {
        beat = await beatGateway(deps, gatewayId);
      } catch (err) {
        run.failure();
        throw err;
      }
      const { watchedSince, recovered } = run.beat(beat.at);
      // Swept as dead by another instance (its nodes were released), or back from an outage during
      // which a release or a lost transition may have left a node we hold marked gone: claim back.
      if (!beat.kept || recovered) reassertDue = true;
      if (reassertDue) {
        const held = heldLinks();
        const reasserted = await reassertLinks(deps, gatewayId, held);
        reassertDue = false;
        if (!beat.kept) log.warn({ held: held.length, reasserted: reasserted.length }, "gateway was swept as dead by another instance; links reasserted");
        else log.info({ held: held.length, reasserted: reasserted.length }, "database reachable again; links reasserted");
      }
      // Just back (or just late): watchedSince is now, so nobody is swept for the silence we shared.
      await sweepDeadGateways(deps, staleMs, watchedSince);
    })()
      .catch((err) => log.warn({ err }, "gateway heartbeat failed"))
      .finally(() => (beating = false));
  }, heartbeatMs);
  timer.unref();
  return () => clearInterval(timer);
}
