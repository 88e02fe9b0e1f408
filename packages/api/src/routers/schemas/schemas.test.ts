// The output schemas are strict: an answer with a field they do not name (a leaked key hash, a
// node's public key) or without one they promise is refused before it leaves the control plane.
import { describe, expect, it } from "vitest";
import { TRPCError } from "@trpc/server";
import { createCallerFactory, router, authedProcedure, type TrpcContext } from "../../trpc";
import { NodeDetail } from "./node-detail";
import { NodePage } from "./node-list";
import { CreatedToken, TokenPage } from "./token";
import { ApiKeyList } from "./api-key";
import { RoleSaved } from "./role";

const at = new Date("2026-01-01T00:00:00Z");
const listedNode = {
  id: "n1",
  name: "web-1",
  hostname: "web-1",
  displayName: null,
  state: "enrolled",
  health: "healthy",
  labels: { tier: "web" },
  declaredVersion: 2,
  appliedVersion: 2,
  rejectedVersion: null,
  ownedCount: 3,
  driftCount: 0,
  errorCount: 0,
  skippedCount: 0,
  conflictCount: 0,
  storeLost: false,
  replacesNodeId: null,
  hostVersion: "0.1.0",
  roles: ["web"],
  lastSeenAt: at,
  lastCheckedAt: at,
  lastChangedAt: null,
  createdAt: at,
};
const apiKey = { id: "k1", name: "ci", role: "admin" as const, createdBy: "user:admin", createdAt: at, revokedAt: null };
// TypeScript refuses the extra key in a literal; a service building its answer from a row does not.
const leakedRow = { ...apiKey, keyHash: "scrypt$…" };

describe("output schemas", () => {
  it("take a node page as node.list returns it, and refuse an extra or a missing field (list class)", () => {
    expect(NodePage.safeParse({ items: [listedNode], total: 1 }).success).toBe(true);
    expect(NodePage.safeParse({ items: [{ ...listedNode, publicKey: "MCow…" }], total: 1 }).error?.issues[0]).toMatchObject({
      code: "unrecognized_keys",
      keys: ["publicKey"],
    });
    const { health: _, ...withoutHealth } = listedNode;
    expect(NodePage.safeParse({ items: [withoutHealth], total: 1 }).error?.issues[0]).toMatchObject({ path: ["items", 0, "health"] });
  });

  it("refuse a node.get that carried the node's public key (detail class)", () => {
    const shape = NodeDetail.keyof().options;
    expect(shape).not.toContain("publicKey");
    expect(NodeDetail.safeParse({ publicKey: "MCow…" }).error?.issues.some((i) => i.code === "unrecognized_keys")).toBe(true);
  });

  it("refuse a token whose expiry is not an ISO 8601 time, and a token list item without its status (mutation and list classes)", () => {
    const token = { id: "abc123", token: "mesh_abc123_secret", expiresAt: at.toISOString(), command: "mesh-host enrol …", installCommand: "curl … | sh" };
    expect(CreatedToken.safeParse(token).success).toBe(true);
    expect(CreatedToken.safeParse({ ...token, expiresAt: at }).success).toBe(false);
    const item = {
      id: "abc123",
      labels: {},
      maxUses: 1,
      uses: 0,
      expiresAt: at,
      createdAt: at,
      createdBy: "user:admin",
      revokedAt: null,
      status: "unused",
      nodes: [],
    };
    expect(TokenPage.safeParse({ items: [item], total: 1 }).success).toBe(true);
    const { status: _, ...withoutStatus } = item;
    expect(TokenPage.safeParse({ items: [withoutStatus], total: 1 }).success).toBe(false);
  });

  it("refuse a role save whose rollout is neither null nor a started rollout", () => {
    const saved = { changed: 0, conflicts: [], role: { name: "web", selector: {}, resources: [], grants: [] }, version: 1, rollout: null };
    expect(RoleSaved.safeParse(saved).success).toBe(true);
    expect(RoleSaved.safeParse({ ...saved, rollout: { id: "r1" } }).success).toBe(false);
  });

  it("turn an answer that breaks its schema into an internal error, the data never sent", async () => {
    const leaky = router({ keys: authedProcedure.output(ApiKeyList).query(() => ({ items: [leakedRow] })) });
    const caller = createCallerFactory(leaky)({ actor: "user:admin", role: "admin" } as TrpcContext);
    const refused = await caller.keys().catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(TRPCError);
    expect(refused).toMatchObject({ code: "INTERNAL_SERVER_ERROR", message: "Output validation failed" });
    const honest = router({ keys: authedProcedure.output(ApiKeyList).query(() => ({ items: [apiKey] })) });
    expect(await createCallerFactory(honest)({ actor: "user:admin", role: "admin" } as TrpcContext).keys()).toEqual({ items: [apiKey] });
  });
});
