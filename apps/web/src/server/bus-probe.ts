// Readiness of the change bus, by round trip: the instance sends a token on the probe channel and
// waits to hear it back through its own subscription. Being subscribed once says nothing about now
// (neither bus tells a subscriber its connection was lost until it is back); hearing one's own
// notification within the deadline does. One notification per check; /readyz reuses a verdict for 1 s.
import { randomBytes } from "node:crypto";
import { CHANNELS, notify, type ChangeBus, type DbOrTx } from "@mesh/db";

export interface BusProbe {
  /** "ok", or why not, within deadlineMs. */
  check(deadlineMs: number): Promise<string>;
  close(): Promise<void>;
}

export async function startBusProbe(db: DbOrTx, bus: ChangeBus): Promise<BusProbe> {
  const waiting = new Map<string, () => void>();
  const unsubscribe = await bus.subscribe(CHANNELS.probe, (token) => waiting.get(token)?.());
  return {
    async check(deadlineMs) {
      const token = randomBytes(12).toString("hex");
      let timer: NodeJS.Timeout | undefined;
      const heard = new Promise<string>((resolve) => {
        waiting.set(token, () => resolve("ok"));
        timer = setTimeout(() => resolve(`no notification heard back within ${deadlineMs} ms`), deadlineMs);
      });
      try {
        await notify(db, CHANNELS.probe, token);
        return await heard;
      } catch (err) {
        return `cannot notify: ${(err as Error).message}`;
      } finally {
        clearTimeout(timer);
        waiting.delete(token);
      }
    },
    close: unsubscribe,
  };
}
