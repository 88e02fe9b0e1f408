// The pause before a failed database write or read is tried again: doubling from `baseMs`, capped.
// One rule for every retrying loop (pushes, catch-up, presence and report batches, retirement).
export function retryDelayMs(failures: number, baseMs = 500, capMs = 30_000): number {
  return Math.min(capMs, baseMs * 2 ** (Math.max(1, failures) - 1));
}
