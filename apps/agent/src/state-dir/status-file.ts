// status.json: what the daemon last did, written after every reconcile and link
// change so that `mesh-host status` can answer without talking to the daemon.
import { z } from "zod";
import { NodeId } from "@mesh/protocol";
import { readJson } from "../store/read-json";
import type { Store } from "../store/store";
import { KEYS } from "./keys";

export const StatusFile = z.strictObject({
  /** damaged: enrolled, but identity.json or node.key cannot be used (see `problem`); it reconciles without a link. */
  state: z.enum(["hosted", "enrolled", "revoked", "damaged"]),
  nodeId: NodeId.nullable(),
  controlPlaneUrl: z.string().max(2048).nullable(),
  connected: z.boolean(),
  /** Version of the declaration last reconciled (0: none yet). */
  declarationVersion: z.number().int().min(0),
  owned: z.number().int().min(0),
  drift: z.number().int().min(0),
  errors: z.number().int().min(0),
  storeLost: z.boolean(),
  lastReconcileAt: z.iso.datetime().nullable(),
  lastReconcileResult: z.enum(["ok", "errors", "failed"]).nullable(),
  hostVersion: z.string().max(64),
  pid: z.number().int(),
  updatedAt: z.iso.datetime(),
  /** What is damaged, with state `damaged`. */
  problem: z.string().max(1024).optional(),
  /** Writes of the host's own state that failed and are being retried (a full disk). */
  stateErrors: z.array(z.string().max(1024)).max(8).optional(),
});
export type StatusFile = z.infer<typeof StatusFile>;

export async function readStatusFile(store: Store): Promise<StatusFile | null> {
  return readJson(store, KEYS.status, StatusFile);
}

export async function writeStatusFile(store: Store, status: StatusFile): Promise<void> {
  await store.write(KEYS.status, JSON.stringify(status) + "\n", { mode: 0o644 });
}
