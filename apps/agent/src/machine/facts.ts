// The machine's profile and inventory as the control plane sees them, with the
// hash of what was last sent: they are sent again only when that hash changes.
import { createHash } from "node:crypto";
import { canonicalJson, type Inventory, type Profile } from "@mesh/protocol";
import type { Store } from "../store/store";
import { KEYS } from "../state-dir/keys";
import { collectInventory } from "./inventory";
import { machineId } from "./machine-id";
import { collectProfile } from "./profile";
import { ProcessRunner } from "../runner/process-runner";
import type { Runner } from "../runner/runner";

export interface Facts {
  profile: Profile;
  inventory: Inventory;
  hash: string;
}

export function factsHash(profile: Profile, inventory: Inventory): string {
  return createHash("sha256").update(canonicalJson({ profile, inventory })).digest("hex");
}

export async function collectFacts(root: string, store: Store, runner: Runner = new ProcessRunner()): Promise<Facts> {
  const profile = await collectProfile(await machineId(root, store), root, runner);
  const inventory = await collectInventory(profile, runner);
  return { profile, inventory, hash: factsHash(profile, inventory) };
}

export async function readSentFactsHash(store: Store): Promise<string | null> {
  const raw = await store.read(KEYS.factsSent);
  const text = raw?.toString("utf8").trim() ?? "";
  return /^[0-9a-f]{64}$/.test(text) ? text : null;
}

export async function writeSentFactsHash(store: Store, hash: string): Promise<void> {
  await store.write(KEYS.factsSent, `${hash}\n`, { mode: 0o600 });
}
