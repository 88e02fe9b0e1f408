// Per-statement times of a batch's transaction, kept only when MESH_MEASURE=1 (the measure tests
// print them, decision 0021's "where the time goes"); otherwise timed() is a plain call.
const measuring = process.env.MESH_MEASURE === "1";

/** Milliseconds per label, in the order they were taken. */
export const statementTimes = new Map<string, number[]>();

export async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  if (!measuring) return fn();
  const t0 = performance.now();
  try {
    return await fn();
  } finally {
    timedSince(label, t0);
  }
}

/** Records the time since t0 (performance.now()) under label. */
export function timedSince(label: string, t0: number): void {
  if (!measuring) return;
  const times = statementTimes.get(label) ?? [];
  times.push(performance.now() - t0);
  statementTimes.set(label, times);
}

/** Each label's count and min / median / max in ms, then forgets them. */
export function takeStatementTimes(): Array<{ statement: string; count: number; minMs: number; medianMs: number; maxMs: number; totalMs: number }> {
  const rows = [...statementTimes.entries()].map(([statement, times]) => {
    const sorted = [...times].sort((a, b) => a - b);
    const ms = (x: number) => Number(x.toFixed(1));
    return {
      statement,
      count: times.length,
      minMs: ms(sorted[0]!),
      medianMs: ms(sorted[Math.floor(sorted.length / 2)]!),
      maxMs: ms(sorted.at(-1)!),
      totalMs: ms(times.reduce((a, b) => a + b, 0)),
    };
  });
  statementTimes.clear();
  return rows;
}
