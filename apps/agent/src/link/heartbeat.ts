// Link liveness on the host side: the server pings every ~15 s; hearing nothing
// (no ping, no message) for 3x that means the link is dead even if TCP says otherwise.
export class Heartbeat {
  private timer: NodeJS.Timeout | null = null;
  constructor(
    private readonly timeoutMs: number,
    private readonly onSilence: () => void,
  ) {}

  beat(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(this.onSilence, this.timeoutMs);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

export const DEFAULT_LINK_TIMEOUT_MS = 45_000;

export function linkTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.MESH_LINK_TIMEOUT_MS);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_LINK_TIMEOUT_MS;
}
