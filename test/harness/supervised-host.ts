// A host that upgrades itself as an installed one does: its own copy of a mesh-host bundle (which a
// host release replaces), enrolled by that binary, run under a Supervisor (systemd's part) every 2 s.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Host } from "./host";
import { Supervisor } from "./supervisor";

export interface SupervisedHost {
  host: Host;
  sup: Supervisor;
  nodeId: string;
}

/** Enrolled at `url` with `token`; the supervisor (with `env`) is not started yet. */
export function supervisedHost(name: string, bundle: Buffer, url: string, token: string, env: Record<string, string>): SupervisedHost {
  const host = new Host(name);
  const binary = path.join(path.dirname(host.root), "bin", "mesh-host.js");
  fs.mkdirSync(path.dirname(binary), { recursive: true });
  fs.writeFileSync(binary, bundle, { mode: 0o755 });
  const flags = ["--state-dir", host.stateDir, "--root", host.root, "--interval", "2"];
  execFileSync(process.execPath, [binary, "enrol", url, "--token", token, "--insecure", ...flags], { stdio: "pipe" });
  const nodeId = JSON.parse(fs.readFileSync(path.join(host.stateDir, "identity.json"), "utf8")).nodeId as string;
  return { host, sup: new Supervisor(binary, host.stateDir, flags, env), nodeId };
}
