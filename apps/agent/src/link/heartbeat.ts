// Link liveness on the host side: the server pings every ~15 s; hearing nothing
// (no ping, no message) for 3x that means the link is dead even if TCP says otherwise.
import type { Clock } from "../clock";

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

export function linkTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.MESH_LINK_TIMEOUT_MS);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_LINK_TIMEOUT_MS;
}
