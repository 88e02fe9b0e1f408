// How the host was installed (the profile's hostInstall, decision 0007), said with the upgrade
// path it takes, so the node page tells which upgrade role matches it.
import { HostInstall } from "@mesh/protocol";

const MEANING: Record<HostInstall, string> = {
  deb: "the mesh-host package: upgraded by a package resource (apt, from the mesh's repository)",
  tarball: "the tarball's single executable: upgraded by a host resource",
  script: "node mesh-host.js (development): upgraded by a host resource",
};

/** What a profile's hostInstall means; a host older than the fact sends none, and matches neither upgrade role. */
export function hostInstallMeaning(value: unknown): string {
  if (value === undefined || value === null) return "not sent: this host is older than the fact, so neither upgrade role's selector matches it";
  const parsed = HostInstall.safeParse(value);
  return parsed.success ? MEANING[parsed.data] : "not one this dashboard knows";
}
