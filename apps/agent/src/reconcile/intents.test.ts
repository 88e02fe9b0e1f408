// Table tests for settling an interrupted change by observing: finished -> owned,
// not started -> forgotten, half done -> owned and finished by the next plan.
import { describe, expect, it } from "vitest";
import { digestOf, type State } from "../resources/observed";
import type { Intent, OwnedRecord } from "../store/ownership";
import { INTERRUPTED, resolveIntent } from "./intents";

const want: State = { type: "file", path: "/f", mode: "0600", sha256: "a".repeat(64) };
const wantDir: State = { type: "directory", path: "/d", mode: "0750" };
const ids = { uid: 0, gid: 0, owner: "root", group: "root" };
const before: State = { type: "file", path: "/f", mode: "0644", sha256: "b".repeat(64), ...ids };
const old = "c".repeat(64);

function rec(intent: Intent, adopted = false): OwnedRecord {
  return {
    id: "r",
    type: intent.want?.type === "directory" ? "directory" : "file",
    subject: "path:/f",
    applied: old,
    intent,
    ...(adopted ? { adopted: { original: { kind: "file", blob: "b".repeat(64), mode: "0644", uid: 0, gid: 0 }, digest: digestOf(before) } } : {}),
  };
}

describe("resolveIntent", () => {
  const cases: { name: string; intent: Intent; adopted?: boolean; observed: State | null; atomic: boolean; verdict: "owned" | "dropped"; applied?: string }[] =
    [
      { name: "create finished", intent: { op: "create", want }, observed: { ...want, ...ids }, atomic: true, verdict: "owned", applied: digestOf(want) },
      { name: "create never started", intent: { op: "create", want }, observed: null, atomic: true, verdict: "dropped" },
      { name: "create found someone else's file (atomic write: not ours)", intent: { op: "create", want }, observed: before, atomic: true, verdict: "dropped" },
      {
        name: "create of a directory stopped before its mode",
        intent: { op: "create", want: wantDir },
        observed: { ...wantDir, mode: "0755", ...ids },
        atomic: false,
        verdict: "owned",
        applied: INTERRUPTED,
      },
      {
        name: "adopt finished",
        intent: { op: "adopt", want },
        adopted: true,
        observed: { ...want, ...ids },
        atomic: true,
        verdict: "owned",
        applied: digestOf(want),
      },
      { name: "adopt never started", intent: { op: "adopt", want }, adopted: true, observed: before, atomic: true, verdict: "dropped" },
      { name: "adopt half done", intent: { op: "adopt", want }, adopted: true, observed: null, atomic: true, verdict: "owned", applied: INTERRUPTED },
      { name: "update finished", intent: { op: "update", want }, observed: { ...want, ...ids }, atomic: true, verdict: "owned", applied: digestOf(want) },
      { name: "update never started keeps what was applied", intent: { op: "update", want }, observed: before, atomic: true, verdict: "owned", applied: old },
      { name: "remove finished", intent: { op: "remove" }, observed: null, atomic: true, verdict: "dropped" },
      { name: "remove never started", intent: { op: "remove" }, observed: before, atomic: true, verdict: "owned", applied: old },
      { name: "restore finished", intent: { op: "restore" }, adopted: true, observed: before, atomic: true, verdict: "dropped" },
      { name: "restore never started", intent: { op: "restore" }, adopted: true, observed: { ...want, ...ids }, atomic: true, verdict: "owned", applied: old },
    ];
  for (const c of cases) {
    it(c.name, () => {
      const record = rec(c.intent, c.adopted);
      expect(resolveIntent(record, c.observed, c.atomic)).toBe(c.verdict);
      expect(record.intent).toBeUndefined();
      if (c.applied) expect(record.applied).toBe(c.applied);
    });
  }
});
