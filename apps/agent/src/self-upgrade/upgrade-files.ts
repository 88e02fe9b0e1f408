// The upgrade breadcrumb and its companions in the state dir, shared with the
// installation's rollback script (infra/package/mesh-host-rollback.sh): names must not drift.
import { z } from "zod";
import { DebianVersion, HostVersion, Sha256Hex } from "@mesh/protocol";
import { KEYS } from "../state-dir/keys";

/**
 * Written before the rename (a `host` upgrade) or before dpkg/apt runs (the host's own package):
 * the new binary is on trial until it reaches the control plane.
 */
export const BREADCRUMB_KEY = KEYS.upgradeBreadcrumb;
/** Made by the rollback script at the first exit after the rename (the old binary's); a second exit on trial rolls back. */
export const EXITED_KEY = KEYS.upgradeExited;
/** The last upgrade that was rolled back, so the same release is not tried again in a loop. */
export const FAILED_KEY = KEYS.upgradeFailed;

/** `to` of a breadcrumb written before the host's own package is installed with no version declared. */
export const PACKAGE_VERSION_PENDING = "package";

export const Breadcrumb = z.strictObject({
  from: z.string().min(1).max(64),
  /**
   * The release put in place: a host version; for a package, dpkg's version (epoch, revision), or
   * PACKAGE_VERSION_PENDING while the package is being installed with no version declared.
   */
  to: z.union([HostVersion, DebianVersion, z.literal(PACKAGE_VERSION_PENDING)]),
  /** The new binary's; absent while the host's own package is still being installed (not known before dpkg puts it there). */
  sha256: Sha256Hex.optional(),
  binary: z.string().min(1).max(4096),
  /** ISO time by which the new binary must have reached the control plane (or trialMs after its own start, if later). */
  deadline: z.iso.datetime(),
  trialMs: z.number().int().positive(),
  /**
   * Set when the new binary came with a package (the host's own `package` resource, an operator's
   * apt upgrade): going back reinstalls `previous` with dpkg/apt so dpkg's record stays true.
   */
  package: z.strictObject({ name: z.string().min(1).max(128), previous: z.string().min(1).max(128) }).optional(),
});
export type Breadcrumb = z.infer<typeof Breadcrumb>;

/** The breadcrumb of an upgrade that was rolled back; without `reason` the installation's script did it. */
export const FailedUpgrade = Breadcrumb.extend({
  reason: z.string().max(512).optional(),
  at: z.iso.datetime().optional(),
  /** A package upgrade whose previous version could not be reinstalled: what dpkg's record still says, and why. */
  note: z.string().max(512).optional(),
});
export type FailedUpgrade = z.infer<typeof FailedUpgrade>;

export const SCRIPT_ROLLBACK_REASON =
  "the new binary exited before it reached the control plane; the installation's rollback step put the previous binary back";

/** The upgrade files are read with the store's one reader (re-exported for the upgrade code). */
export { readJson } from "../store/read-json";
