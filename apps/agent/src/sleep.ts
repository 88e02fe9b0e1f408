// The one wait of the host: a sleep on the agent's clock (so fake timers drive it), which a wake
// ends early. The loop's interval, the link's backoff, the supervisor's restart delay and its polls use it.
import { type Clock, systemClock } from "./clock";

export interface Sleep {
  /** Resolves when the time is up or `wake` was called, whichever is first. */
  done: Promise<void>;
  /** Ends the sleep now; harmless after it ended. */
  wake(): void;
}

export interface SleepOptions {
  /** The clock whose timer it waits on; the system's by default. */
  clock?: Clock;
  /** A poll that must not keep the process alive on its own. */
  unref?: boolean;
  /** Ends the sleep early when aborted (already aborted: it does not wait). */
  signal?: AbortSignal;
}

export function wakeableSleep(ms: number, opts: SleepOptions = {}): Sleep {
  const clock = opts.clock ?? systemClock;
  let wake: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    if (opts.signal?.aborted) return resolve();
    const timer = clock.setTimeout(() => wake(), ms);
    if (opts.unref) (timer as { unref?: () => void } | null)?.unref?.();
    wake = () => {
      clock.clearTimeout(timer);
      opts.signal?.removeEventListener("abort", wake);
      resolve();
    };
    opts.signal?.addEventListener("abort", wake, { once: true });
  });
  return { done, wake };
}

export function sleep(ms: number, opts: SleepOptions = {}): Promise<void> {
  return wakeableSleep(ms, opts).done;
}
