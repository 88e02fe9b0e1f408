// Nodes enrolled through the real services (a token, then enrolment with a fresh key and a test
// profile): the way most service tests get a node, said once.
import type { Profile } from "@mesh/protocol";
import type { Deps } from "../deps";
import { enrolNode } from "../services/enrol-node";
import { createToken } from "../services/tokens";
import { emptyInventory, testKeyPair, testProfile } from "./host-facts";

export interface TestNodeOptions {
  /** The token's labels, which the node gets. */
  labels?: Record<string, string>;
  machineId?: string;
  /** What the profile says other than the defaults (a hostname, an os). */
  profile?: Partial<Profile>;
}

/** Enrols one node with its own single-use token; its id, machine id and the key pair it enrolled with. */
export async function enrolTestNode(deps: Deps, opts: TestNodeOptions = {}) {
  const keys = testKeyPair();
  const machineId = opts.machineId ?? crypto.randomUUID();
  const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { labels: opts.labels ?? {} } });
  const { nodeId } = await enrolNode(deps, { token, publicKey: keys.publicKey, profile: testProfile(machineId, opts.profile), inventory: emptyInventory() });
  return { nodeId, machineId, ...keys };
}

/** Enrols one node with a token the test already holds (a test profile, a fresh key); its id and key pair. */
export async function enrolWithToken(deps: Deps, token: string) {
  const keys = testKeyPair();
  const { nodeId } = await enrolNode(deps, { token, publicKey: keys.publicKey, profile: testProfile(crypto.randomUUID()), inventory: emptyInventory() });
  return { nodeId, ...keys };
}

/** `count` nodes enrolled one after another with one token made for them all (its labels theirs); their ids in enrolment order. */
export async function enrolNodesOneByOne(deps: Deps, count: number, labels: Record<string, string> = {}): Promise<string[]> {
  const { token } = await createToken(deps, { actor: "test", publicUrl: "http://cp", input: { maxUses: count, labels } });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await enrolWithToken(deps, token)).nodeId);
  return ids;
}
