// Builds the host's artifacts (binary, tarball, .deb) of a chosen version with the
// project's own `infra/package/package.mjs`, into a directory of the test's.
import { execFileSync } from "node:child_process";
import { REPO } from "./paths";

export interface Artifacts {
  version: string;
  binary: string;
  binaryBytes: number;
  binaryGzipBytes: number;
  tarball: string;
  tarballBytes: number;
  deb: string;
  debBytes: number;
}

export function buildArtifacts(version: string, outDir: string): Artifacts {
  const out = execFileSync(process.execPath, [`${REPO}/infra/package/package.mjs`], {
    // A test build: the tests sign releases with the committed test key.
    env: { ...process.env, MESH_TEST_BUILD: "1", MESH_HOST_VERSION: version, MESH_PACKAGE_OUT: outDir },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: 300_000,
  });
  return JSON.parse(out.trim().split("\n").pop()!) as Artifacts;
}
