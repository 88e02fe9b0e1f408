// `mesh-host version`: the host's version alone on stdout, so that scripts and
// the upgrade path can compare it without parsing.
import { HOST_VERSION } from "../version";

export function versionCommand(): number {
  process.stdout.write(`${HOST_VERSION}\n`);
  return 0;
}
