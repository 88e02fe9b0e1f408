// Nodes enrolled through the real services (a token, then enrolment with a fresh key and a test
// profile): the way most service tests get a node, said once.
import type { Deps } from "../deps";
import { enrolNode } from "../services/enrol-node";
import { createToken } from "../services/tokens";
import { emptyInventory, testKeyPair, testProfile } from "./host-facts";

/** A fresh token for `labels` (single use unless `maxUses` says more). */
export async function testToken(deps: Deps, labels: Record<string, string> = {}, maxUses = 1): Promise<string> {
  return (await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels, maxUses } })).token;
}

/** Enrols one node with its own token; returns its id and the key it enrolled with. */
export async function enrolTestNode(deps: Deps, labels: Record<string, string> = {}, machineId: string = crypto.randomUUID()) {
  const keys = testKeyPair();
  const { nodeId } = await enrolNode(deps, {
    token: await testToken(deps, labels),
    publicKey: keys.publicKey,
    profile: testProfile(machineId),
    inventory: emptyInventory(),
  });
  return { nodeId, ...keys };
}
