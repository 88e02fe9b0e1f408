// vitest global setup: build dist/mesh-host.js once, so that the CLI tests run
// the real bundle the way an operator would.
import { execFileSync } from "node:child_process";
import { join } from "node:path";

export default function setup(): void {
  execFileSync(process.execPath, [join(__dirname, "..", "scripts", "build.mjs")], { stdio: "inherit" });
}
