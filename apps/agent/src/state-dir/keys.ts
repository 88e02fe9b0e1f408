// Everything the host keeps in its state dir (/var/lib/mesh-host), named here and only here, so a
// reader of the state dir (and of this code) sees the whole layout at once. Store keys are files
// written atomically through the Store; the last group are names the host uses beside the store.
export const KEYS = {
  /** The node's enrolled identity (state-dir/identity.ts) and its Ed25519 private key. */
  identity: "identity.json",
  privateKey: "node.key",
  /** The last good declaration, reconciled towards without a link (state-dir/held-declaration.ts). */
  declaration: "declaration.json",
  /** What `mesh-host status` reads of a running daemon (state-dir/status-file.ts). */
  status: "status.json",
  machineId: "machine-id",
  /** sha256 of the profile and inventory last sent to the control plane. */
  factsSent: "facts.sha256",
  /** Reports not yet acknowledged by the control plane (reports/outbox.ts); set aside as `.damaged`. */
  reportOutbox: "report-outbox.json",
  /** What the host owns (store/ownership.ts); set aside as `store.json.lost-*` or `.rolled-back-*`. */
  ownership: "store.json",
  /** Drift an operator accepted, beside store.json (store/accepted-drift.ts). */
  accepted: "accepted.json",
  /** The self-upgrade's breadcrumb and its companions, shared with infra/package/mesh-host-rollback.sh. */
  upgradeBreadcrumb: "upgrade.json",
  upgradeExited: "upgrade.exited",
  upgradeFailed: "upgrade-failed.json",
} as const;

/** The folders and files beside the store's keys. */
export const STATE_DIR_NAMES = {
  /** Contents of adopted files, as `originals/<sha256>` keys (resources/original-blobs.ts). */
  originals: "originals",
  /** Sources downloaded ahead of an apply (resources/source-cache.ts). */
  downloads: "downloads",
  /** One mesh-host at a time (state-dir/lock.ts). */
  lock: "lock",
  /** The daemon's local door (state-dir/control-socket.ts). */
  controlSocket: "control.sock",
} as const;

export const DEFAULT_STATE_DIR = "/var/lib/mesh-host";
