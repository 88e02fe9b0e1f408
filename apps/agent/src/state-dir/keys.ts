// The names of everything the host keeps in its state dir, in one place, so a
// reader of the state dir (and of this code) sees the whole layout at once.
export const KEYS = {
  identity: "identity.json",
  privateKey: "node.key",
  declaration: "declaration.json",
  status: "status.json",
  machineId: "machine-id",
  /** sha256 of the profile and inventory last sent to the control plane. */
  factsSent: "facts.sha256",
  /** Reports not yet acknowledged by the control plane (reports/outbox.ts). */
  reportOutbox: "report-outbox.json",
} as const;

export const DEFAULT_STATE_DIR = "/var/lib/mesh-host";
