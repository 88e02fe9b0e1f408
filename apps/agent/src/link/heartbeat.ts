// Link liveness on the host side: the server pings every ~15 s; hearing nothing
// (no ping, no message) for 3x that means the link is dead even if TCP says otherwise.
import type { Clock } from "../clock";
import { msFromEnv } from "../env-number";

export class Heartbeat {
  private timer: unknown = null;
  constructor(
    private readonly clock: Clock,
    private readonly timeoutMs: number,
    private readonly onSilence: () => void,
  ) {}

  beat(): void {
    this.clock.clearTimeout(this.timer);
    this.timer = this.clock.setTimeout(this.onSilence, this.timeoutMs);
  }

  stop(): void {
    this.clock.clearTimeout(this.timer);
    this.timer = null;
  }
}

export const DEFAULT_LINK_TIMEOUT_MS = 45_000;

/** MESH_LINK_TIMEOUT_MS; a value that is no whole number of ms above 0 stops the start, naming it. */
export function linkTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  return msFromEnv(env, "MESH_LINK_TIMEOUT_MS", DEFAULT_LINK_TIMEOUT_MS);
}
