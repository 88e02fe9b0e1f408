// vitest global setup: build dist/mesh-host.js once, so that the CLI tests run
// the real bundle the way an operator would.
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export default function setup(): void {
  // A test build (MESH_TEST_BUILD=1), as every build the tests make: it trusts the committed test release key.
  execFileSync(process.execPath, [join(__dirname, "..", "scripts", "build.mjs")], { stdio: "inherit", env: { ...process.env, MESH_TEST_BUILD: "1" } });
}
