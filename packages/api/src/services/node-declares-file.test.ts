// A node downloads the previous declaration's files only while it may still be applying it:
// not once it reported applying the current one (even if it later reports an older version),
// and not past a grace period however long it keeps reporting the old one.
import { describe, expect, it } from "vitest";
import { testEngines } from "@mesh/db/testing";
import type { Deps } from "../deps";
import { createToken } from "./tokens";
import { enrolNode } from "./enrol-node";
import { nodeDeclaresFile, PREVIOUS_DECLARATION_GRACE_MS } from "./node-declares-file";
import { currentDeclaration } from "./declaration-store";
import { recordReport } from "./record-report";
import { upsertRole } from "./roles";
import { emptyInventory, testKeyPair, testProfile, testReport } from "../testing/host-facts";
import { useServiceDeps } from "../testing/service-deps";

const A = "a".repeat(64);
const B = "b".repeat(64);

describe.each(testEngines())("files a node may download on %s", (engine) => {
  let deps: Deps;
  useServiceDeps(engine, (d) => (deps = d));

  const role = (sha256: string) =>
    upsertRole(deps, {
      actor: "test",
      input: {
        name: "files",
        selector: { labels: { files: "yes" } },
        resources: [{ type: "file", id: "f", path: "/etc/f", source: { url: `/api/files/${sha256}`, sha256 } }],
      },
    });
  /** A report of a version; `drifted` makes it differ from the last one stored (an equal one is not written). */
  const report = (declarationVersion: number, drifted = false) =>
    testReport(declarationVersion, {
      drift: drifted ? [{ id: "f", type: "file" as const, declared: A, observed: B, description: "content differs", corrected: false }] : [],
    });

  it("lets a host reporting an old version keep the previous declaration's files neither after it applied the current one nor past the grace", async () => {
    await role(A);
    const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels: { files: "yes" } } });
    const { nodeId } = await enrolNode(deps, {
      token,
      publicKey: testKeyPair().publicKey,
      profile: testProfile(crypto.randomUUID()),
      inventory: emptyInventory(),
    });
    const first = (await currentDeclaration(deps.db, nodeId))!.version;
    await recordReport(deps, nodeId, report(first));
    await role(B);
    const second = (await currentDeclaration(deps.db, nodeId))!.version;
    expect(second).toBe(first + 1);
    // Still applying the first: its file, and the new one.
    expect(await nodeDeclaresFile(deps.db, nodeId, A)).toBe(true);
    expect(await nodeDeclaresFile(deps.db, nodeId, B)).toBe(true);
    // Reporting the old version for ever does not keep the old file past the grace.
    const later = () => Date.now() + PREVIOUS_DECLARATION_GRACE_MS + 1000;
    expect(await nodeDeclaresFile(deps.db, nodeId, A, later)).toBe(false);
    expect(await nodeDeclaresFile(deps.db, nodeId, B, later)).toBe(true);
    // Once it reported the current one, an older report brings nothing back.
    await recordReport(deps, nodeId, report(second));
    expect(await recordReport(deps, nodeId, report(first, true))).toBe(true);
    expect(await nodeDeclaresFile(deps.db, nodeId, A)).toBe(false);
    expect(await nodeDeclaresFile(deps.db, nodeId, B)).toBe(true);
  });
});
