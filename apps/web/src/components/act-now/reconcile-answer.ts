// What a reconcile-now call did, in words: how many were asked, and why some will not reconcile now.
export interface ReconcileAnswer {
  asked: number;
  sent: number;
  offline: number;
  tooOld: number;
}

const nodes = (n: number) => `${n} node${n === 1 ? "" : "s"}`;

export function describeReconcile(a: ReconcileAnswer): string {
  if (a.asked === 0) return "No node to reconcile.";
  const parts = [`${a.sent} of ${nodes(a.asked)} asked to reconcile now`];
  if (a.offline > 0) parts.push(`${a.offline} offline (${a.offline === 1 ? "it reconciles" : "they reconcile"} when linked again)`);
  if (a.tooOld > 0) parts.push(`${a.tooOld} with a mesh-host too old to be asked (upgrade it; the timer still reconciles)`);
  return parts.join("; ") + ".";
}
