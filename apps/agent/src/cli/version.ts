// `mesh-host version`: the host's version alone on stdout, so that scripts and
// the upgrade path can compare it without parsing; a test build says so on stderr.
import { TEST_BUILD, TEST_BUILD_WARNING } from "../self-upgrade/release-key";
import { HOST_VERSION } from "../version";

export function versionCommand(): number {
  process.stdout.write(`${HOST_VERSION}\n`);
  if (TEST_BUILD) process.stderr.write(`mesh-host: ${TEST_BUILD_WARNING}\n`);
  return 0;
}
