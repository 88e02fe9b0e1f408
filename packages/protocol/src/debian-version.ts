// Debian package versions, one contract for the control plane and the host: what a declaration may
// name, and when two versions (a declared one, dpkg's, a host's own) are one (decision 0007).
// Debian policy 5.6.12: [epoch:]upstream_version[-debian_revision].
import { z } from "zod";

export interface DebianVersionParts {
  /** The epoch as written without leading zeros; "0" when absent. */
  epoch: string;
  upstream: string;
  /** Null when the version has none. */
  revision: string | null;
}

// Policy says the upstream version "should" start with a digit; dpkg only warns when it does not, and
// third-party repositories ship such versions, so a letter is accepted too (what dpkg refuses is refused).
// Without an epoch: a letter or digit, then [A-Za-z0-9.+~-]; what follows the last "-" (the revision) is not empty
// and holds no "-". After an epoch the upstream version may hold ':' too, the revision never.
const REV = "[A-Za-z0-9.+~]";
export const DEBIAN_VERSION = new RegExp(
  `^(?:[0-9]+:[A-Za-z0-9](?:[A-Za-z0-9.+~:]*|[A-Za-z0-9.+~:-]*-${REV}+)|[A-Za-z0-9](?:[A-Za-z0-9.+~]*|[A-Za-z0-9.+~-]*-${REV}+))$`,
);

/** The parts of a Debian version, or null when it breaks the policy's syntax. */
export function parseDebianVersion(version: string): DebianVersionParts | null {
  if (version.length > 128 || !DEBIAN_VERSION.test(version)) return null;
  const colon = /^[0-9]+:/.test(version) ? version.indexOf(":") : -1;
  const rest = version.slice(colon + 1);
  const dash = rest.lastIndexOf("-");
  return {
    epoch: colon < 0 ? "0" : version.slice(0, colon).replace(/^0+(?=[0-9])/, ""),
    upstream: dash < 0 ? rest : rest.slice(0, dash),
    revision: dash < 0 ? null : rest.slice(dash + 1),
  };
}

export const DebianVersion = z
  .string()
  .min(1)
  .max(128)
  .regex(DEBIAN_VERSION, "a Debian version: [epoch:]upstream[-revision], the upstream version starting with a letter or digit");

/**
 * The version as one spelling: the epoch is a number, so an explicit "0:" is dropped ("0:1.2-1" is
 * "1.2-1") and leading zeros go ("01:1.2" is "1:1.2"). Anything that is no Debian version is returned as it is.
 */
export function normalDebianVersion(version: string): string {
  const parts = parseDebianVersion(version);
  if (!parts) return version;
  const upstreamAndRevision = parts.revision === null ? parts.upstream : `${parts.upstream}-${parts.revision}`;
  return parts.epoch === "0" ? upstreamAndRevision : `${parts.epoch}:${upstreamAndRevision}`;
}

/** Whether two strings name one Debian version (the same once normalDebianVersion); none is no version. */
export function sameDebianVersion(a: string | null | undefined, b: string | null | undefined): boolean {
  if (!a || !b) return false;
  return normalDebianVersion(a) === normalDebianVersion(b);
}
