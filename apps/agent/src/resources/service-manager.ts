// What runs services on this machine, behind one interface: systemd through systemctl
// where it is PID 1, otherwise the host's own supervisor (supervisor/supervised-manager.ts).
import { CommandFailedError, runOrThrow, type Runner } from "../runner/runner";

export type ServiceVerb = "enable" | "disable" | "start" | "stop" | "restart";

export interface ServiceManager {
  /** "systemd", or "mesh-host" for the host's own supervisor. */
  readonly name: "systemd" | "mesh-host";
  /** Whether start and stop act here; systemd under a sandbox root manages unit files and enablement only. */
  readonly controlsProcesses: boolean;
  /** enabled, disabled, static, masked, not-found, ... (what `systemctl is-enabled` says). */
  isEnabled(unit: string): Promise<string>;
  /** active, inactive, failed, activating, deactivating; "unknown" where processes are not controlled. */
  isActive(unit: string): Promise<string>;
  /** Carry out one verb; throws with the manager's own words when it fails. */
  act(verb: ServiceVerb, unit: string): Promise<void>;
  /** A unit file changed on disk; true when the manager had something to reload. */
  reload(): Promise<boolean>;
}

/** systemd: every question and change is one systemctl command through the Runner. */
export function systemdManager(runner: Runner, root: string): ServiceManager {
  const rootArgs = root === "/" ? [] : [`--root=${root}`];
  // is-enabled and is-active answer on stdout and say "no" through their exit status, which is not a failure.
  const query = async (args: string[]): Promise<string> => {
    const argv = ["systemctl", ...rootArgs, ...args];
    const result = await runner.run(argv);
    const answer = result.stdout.trim().split("\n")[0]?.trim() ?? "";
    if (/^[a-z-]+$/.test(answer)) return answer;
    // Older systemd says nothing on stdout for a unit it does not know.
    if (args[0] === "is-enabled" && /No such file or directory|not found/i.test(result.stderr)) return "not-found";
    throw new CommandFailedError(argv, result, `cannot ask systemd about ${args[1]}`);
  };
  return {
    name: "systemd",
    controlsProcesses: root === "/",
    isEnabled: (unit) => query(["is-enabled", unit]),
    isActive: async (unit) => (root === "/" ? query(["is-active", unit]) : "unknown"),
    async act(verb, unit) {
      await runOrThrow(runner, ["systemctl", ...rootArgs, verb, unit], {}, `cannot ${verb} ${unit}`);
    },
    async reload() {
      // The running manager never reads a sandbox root, so there is nothing to reload.
      if (root !== "/") return false;
      await runOrThrow(runner, ["systemctl", "daemon-reload"], {}, "cannot daemon-reload");
      return true;
    },
  };
}
