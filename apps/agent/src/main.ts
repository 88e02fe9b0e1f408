// mesh-host: the host's command line. Parses arguments, dispatches to one file
// per command in cli/, and turns errors into exit codes (0 ok, 1 failure, 2 bad usage or input).
import { parseArgs } from "node:util";
import { HostError, reasonOf } from "./host-error";
import { commonOptions } from "./cli/options";
import { describeParseError } from "./cli/usage-hint";
import type { Logger } from "./log";

const USAGE = `usage: mesh-host <command> [options]

commands:
  enrol URL (--token T | --token - | --token-file F) (--ca-pin sha256:HEX | --insecure) [--force]
                                  enrol this machine with a control plane; \`--token -\` reads
                                  the token from standard input (keeps it out of \`ps\`)
  run                             the daemon: hold the link and reconcile
  reconcile [--json]              ask the running daemon to reconcile now; prints the result
  status [--json]                 hosted or enrolled, and what was last reconciled
  apply --file F [--json]         reconcile a local declaration once
  bootstrap --bundle F            node one: apply the bundle that raises the control plane,
                                  take a token from it over loopback, and enrol
  version                         print the host's version
  supervise --unit U              (started by the host) run one service where systemd is not PID 1

options:
  --state-dir DIR      state directory (env MESH_STATE_DIR, default /var/lib/mesh-host)
  --root DIR           prefix for every path resources touch (env MESH_ROOT, default /)
  --interval SECONDS   timer reconcile interval (default 300)

environment:
  MESH_SERVICE_MANAGER  what runs service resources: systemd, mesh-host (its own supervisor)
                        or auto (default: systemd where it is PID 1)
`;

const ALLOWED: Record<string, string[]> = {
  enrol: ["token", "token-file", "force", "ca-pin", "insecure"],
  run: [],
  reconcile: ["json"],
  status: ["json"],
  apply: ["file", "json"],
  bootstrap: ["bundle"],
  version: [],
  supervise: ["unit"],
};

export async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        "state-dir": { type: "string" },
        root: { type: "string" },
        interval: { type: "string" },
        token: { type: "string" },
        "token-file": { type: "string" },
        force: { type: "boolean", default: false },
        "ca-pin": { type: "string" },
        insecure: { type: "boolean", default: false },
        json: { type: "boolean", default: false },
        file: { type: "string" },
        bundle: { type: "string" },
        unit: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (err) {
    const said = describeParseError(err, argv, { usage: USAGE, commands: Object.keys(ALLOWED), options: ALLOWED, common: ["state-dir", "root", "interval"] });
    process.stderr.write(said ?? `mesh-host: ${reasonOf(err)}\n\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (!command) {
    process.stderr.write(`mesh-host: a command is required\n\n${USAGE}`);
    return 2;
  }
  // Each command's code loads when it runs: `supervise`, one per service, stays small and quick to start.
  if (command === "version") return (await import("./cli/version")).versionCommand();

  let log: Logger | null = null;
  const logger = async () => (log ??= (await import("./log")).createLogger());
  try {
    const allowed = ALLOWED[command];
    if (!allowed) throw new HostError("usage", `unknown command ${JSON.stringify(command)}`);
    for (const key of ["token", "token-file", "force", "json", "file", "bundle", "ca-pin", "insecure", "unit"] as const) {
      const v = values[key];
      if (v !== undefined && v !== false && !allowed.includes(key)) {
        throw new HostError("usage", `--${key} does not apply to ${command}`);
      }
    }
    const expectedPositionals = command === "enrol" ? 1 : 0;
    if (rest.length > expectedPositionals) throw new HostError("usage", `${command}: unexpected argument ${JSON.stringify(rest[expectedPositionals])}`);
    const common = commonOptions(values);
    switch (command) {
      case "enrol":
        return await (await import("./cli/enrol")).enrolCommand({
          ...common,
          url: rest[0],
          token: values.token,
          tokenFile: values["token-file"],
          force: values.force ?? false,
          caPin: values["ca-pin"],
          insecure: values.insecure ?? false,
          log: await logger(),
        });
      case "run":
        return await (await import("./cli/run")).runCommand({ ...common, log: await logger() });
      case "reconcile":
        return await (await import("./cli/reconcile")).reconcileCommand({ ...common, json: values.json ?? false });
      case "status":
        return await (await import("./cli/status")).statusCommand({ ...common, json: values.json ?? false, log: await logger() });
      case "apply":
        return await (await import("./cli/apply")).applyCommand({ ...common, file: values.file, json: values.json ?? false, log: await logger() });
      case "bootstrap":
        return await (await import("./cli/bootstrap")).bootstrapCommand({ ...common, bundle: values.bundle, log: await logger() });
      case "supervise":
        // The protocol is loaded only here: the other commands start without it.
        if (!values.unit || !(await import("@mesh/protocol")).isUnitName(values.unit, ["service"]))
          throw new HostError("usage", "supervise: --unit needs a .service unit name");
        return await (await import("./supervisor/supervise")).superviseCommand({ rootDir: common.root, unit: values.unit });
    }
    return 2;
  } catch (err) {
    if (err instanceof HostError) {
      process.stderr.write(`${err.code === "usage" ? "mesh-host: " : ""}${err.message}\n`);
      if (err.code === "usage") process.stderr.write(`run \`mesh-host --help\` for usage\n`);
      return err.exitCode;
    }
    (await logger()).error({ err }, "unexpected failure");
    process.stderr.write(`mesh-host: ${reasonOf(err)}\n`);
    return 1;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`mesh-host: ${reasonOf(err)}\n`);
      process.exitCode = 1;
    },
  );
}
