// `mesh-host reconcile [--json]`: asks the running daemon (its control socket in the state dir) for
// one reconcile now, waits for that reconcile's result and prints it as `apply` does. It never
// reconciles itself: one reconciler per state dir. With no daemon it says so and what to run instead.
import { userInfo } from "node:os";
import { HostError } from "../host-error";
import { ControlUnreachable, askDaemon } from "../state-dir/control-socket";
import { lockHolder } from "../state-dir/lock";
import type { CommonOptions } from "./options";
import { describeOutcome } from "./outcome";

export async function reconcileCommand(opts: CommonOptions & { json: boolean }): Promise<number> {
  let answer;
  try {
    answer = await askDaemon(opts.stateDir, { type: "reconcile", reason: `mesh-host reconcile by ${whoAmI()} on the machine` });
  } catch (err) {
    if (!(err instanceof ControlUnreachable)) throw err;
    const holder = await lockHolder(opts.stateDir);
    if (err.absent && holder === null) {
      throw new HostError(
        "failure",
        `no mesh-host daemon is running on the state dir ${opts.stateDir}: nothing to ask. Start it (\`systemctl start mesh-host\` or \`mesh-host run\`), or reconcile a local declaration once with \`mesh-host apply --file F\`.`,
      );
    }
    const who = holder !== null ? `the mesh-host holding the state dir (pid ${holder})` : "the daemon";
    throw new HostError("failure", `cannot ask ${who} to reconcile: ${err.message}`);
  }
  if (!answer.ok) throw new HostError("failure", `the daemon did not reconcile: ${answer.error}`);
  if (opts.json) process.stdout.write(JSON.stringify(answer.report, null, 2) + "\n");
  else process.stdout.write(describeOutcome(answer.report, answer.changes, answer.unchanged).join("\n") + "\n");
  return answer.report.errors.length ? 1 : 0;
}

function whoAmI(): string {
  try {
    return userInfo().username.slice(0, 64);
  } catch {
    return `uid ${process.getuid?.() ?? "?"}`;
  }
}
