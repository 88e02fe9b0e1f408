// The host's state transitions (host-states.ts) as tables: each row a state, an event, the state after.
import { describe, expect, it } from "vitest";
import {
  NOT_LOST,
  RUNNING,
  initialStanding,
  lifeOn,
  lostOnAck,
  lostOnReconciled,
  lostOnReport,
  lostSince,
  standingOnLinkUp,
  standingOnRevoked,
  type Life,
  type LostStore,
  type Standing,
} from "./host-states";

describe("Life", () => {
  it.each<[Life, "stop" | "retired", Life]>([
    [RUNNING, "stop", { kind: "stopping" }],
    [RUNNING, "retired", { kind: "retiring" }],
    [{ kind: "stopping" }, "retired", { kind: "retiring" }],
    [{ kind: "retiring" }, "stop", { kind: "retiring" }],
    [{ kind: "stopping" }, "stop", { kind: "stopping" }],
  ])("%o on %s is %o", (from, event, to) => expect(lifeOn(from, event)).toEqual(to));
});

describe("Standing", () => {
  const revoked: Standing = { kind: "revoked", reason: "node revoked" };
  const damaged: Standing = { kind: "damaged", problem: "node.key unreadable" };
  it.each<[string, Standing, Standing]>([
    ["a damaged start", initialStanding("node.key unreadable"), damaged],
    ["an enrolled start", initialStanding(undefined), { kind: "enrolled" }],
    ["a link up after a revocation", standingOnLinkUp(revoked), { kind: "enrolled" }],
    ["a link up while enrolled", standingOnLinkUp({ kind: "enrolled" }), { kind: "enrolled" }],
    ["a revocation", standingOnRevoked({ kind: "enrolled" }, "node revoked"), revoked],
    ["a second revocation keeps the newest reason", standingOnRevoked(revoked, "closed: revoked"), { kind: "revoked", reason: "closed: revoked" }],
    ["damaged stays damaged", standingOnRevoked(damaged, "node revoked"), damaged],
  ])("%s", (_name, got, want) => expect(got).toEqual(want));
});

describe("LostStore", () => {
  const saying: LostStore = { kind: "saying", since: 7 };
  const acked: LostStore = { kind: "acked", since: 7 };
  it.each<[string, LostStore, LostStore]>([
    ["a report saying lost starts the saying at its sequence", lostOnReport(NOT_LOST, true, 7), saying],
    ["a later report saying lost does not move it", lostOnReport(saying, true, 9), saying],
    ["a report not saying lost changes nothing", lostOnReport(NOT_LOST, false, 7), NOT_LOST],
    ["an ack before it changes nothing", lostOnAck(saying, 6), saying],
    ["an ack at it acknowledges it", lostOnAck(saying, 7), acked],
    ["an ack past it acknowledges it", lostOnAck(saying, 12), acked],
    ["an ack with nothing lost changes nothing", lostOnAck(NOT_LOST, 12), NOT_LOST],
    ["a run that started acknowledged and found the store whole ends it", lostOnReconciled(acked, true, false), NOT_LOST],
    ["a run that started acknowledged and found it lost again keeps it", lostOnReconciled(acked, true, true), acked],
    ["a run that started before the ack keeps it", lostOnReconciled(acked, false, false), acked],
  ])("%s", (_name, got, want) => expect(got).toEqual(want));

  it("says since when, while there is a loss", () => {
    expect([NOT_LOST, saying, acked].map(lostSince)).toEqual([null, 7, 7]);
  });
});
