// Parser for the subset of systemd unit-file syntax (systemd.syntax(7), systemd.service(5)) that the
// host's own supervisor can honour when systemd is not PID 1: the directives and what they add up to.
// The lexical rules are in unit-syntax.ts, Exec*= lines in exec-line.ts. Pure: no I/O, no process spawning.
import { parseUnitName } from "@mesh/protocol";
import { ENV_NAME } from "./environment-file";
import { parseExecLine, type UnitCommand } from "./exec-line";
import { bool, fail, isSignal, logicalLines, signal, specifiers, splitWords, timespanMs, type UnitContext } from "./unit-syntax";

export type RestartPolicy = "no" | "always" | "on-success" | "on-failure" | "on-abnormal" | "on-abort";
/** What a .service unit asks for, as far as the host supervisor is concerned. */
export interface UnitSpec {
  unit: string;
  description: string | null;
  type: "simple" | "exec" | "oneshot" | "notify" | "idle";
  execStartPre: UnitCommand[];
  execStart: UnitCommand[];
  execStartPost: UnitCommand[];
  execStop: UnitCommand[];
  environment: Record<string, string>;
  environmentFiles: { path: string; optional: boolean }[];
  workingDirectory: { path: string; optional: boolean } | null;
  user: string | null;
  group: string | null;
  restart: RestartPolicy;
  restartMs: number;
  /** Infinity for "infinity" (and for 0, which systemd treats as "no timeout"). */
  timeoutStopMs: number;
  killSignal: NodeJS.Signals;
  killMode: "control-group" | "mixed" | "process";
  successExitStatus: number[];
  remainAfterExit: boolean;
  /** 0 means rate limiting is off, as in systemd. */
  startLimitIntervalMs: number;
  startLimitBurst: number;
  wantedBy: string[];
  requiredBy: string[];
  hasInstall: boolean;
  /** "Section.Key" of recognised directives accepted but not enforced (sandboxing, ordering, limits...). */
  notEnforced: string[];
  /** "Section.Key" of directives this parser does not know. */
  ignored: string[];
}

const MAX_TEXT = 256 * 1024;
const RESTART = ["no", "always", "on-success", "on-failure", "on-abnormal", "on-abort"] as const;
const TYPES = ["simple", "exec", "oneshot", "notify", "idle"] as const;
const KILL_MODES = ["control-group", "mixed", "process"] as const;
const LIST_EXEC = { ExecStartPre: "execStartPre", ExecStart: "execStart", ExecStartPost: "execStartPost", ExecStop: "execStop" } as const;

const NOT_ENFORCED: Record<string, Set<string>> = {
  Unit: new Set(
    (
      "Documentation After Before Wants Requires Requisite BindsTo PartOf Upholds Conflicts OnFailure OnSuccess " +
      "PropagatesReloadTo ReloadPropagatedFrom JoinsNamespaceOf RequiresMountsFor DefaultDependencies StopWhenUnneeded " +
      "RefuseManualStart RefuseManualStop AllowIsolate IgnoreOnIsolate JobTimeoutSec JobRunningTimeoutSec StartLimitAction " +
      "FailureAction SuccessAction CollectMode"
    ).split(" "),
  ),
  Service: new Set(
    (
      "ExecReload ExecStopPost ExecCondition TimeoutStartSec TimeoutAbortSec RuntimeMaxSec WatchdogSec NotifyAccess " +
      "GuessMainPID RestartPreventExitStatus RestartForceExitStatus RestartSteps RestartMaxDelaySec SendSIGKILL SendSIGHUP " +
      "FinalKillSignal OOMPolicy NoNewPrivileges CapabilityBoundingSet AmbientCapabilities SecureBits ReadWritePaths ReadOnlyPaths " +
      "InaccessiblePaths ExecPaths NoExecPaths BindPaths BindReadOnlyPaths TemporaryFileSystem LockPersonality " +
      "MemoryDenyWriteExecute SystemCallFilter SystemCallArchitectures SystemCallErrorNumber SystemCallLog DevicePolicy DeviceAllow " +
      "UMask Nice CPUSchedulingPolicy CPUSchedulingPriority IOSchedulingClass IOSchedulingPriority OOMScoreAdjust CPUAffinity " +
      "MemoryMax MemoryHigh MemoryLow MemoryMin MemoryLimit MemorySwapMax CPUQuota CPUWeight CPUShares TasksMax IOWeight " +
      "IPAddressAllow IPAddressDeny Slice Delegate DynamicUser SupplementaryGroups RemoveIPC KeyringMode ProcSubset RootDirectory " +
      "RootImage StandardInput StandardOutput StandardError SyslogIdentifier SyslogFacility SyslogLevel LogLevelMax TTYPath " +
      "RuntimeDirectory StateDirectory CacheDirectory LogsDirectory ConfigurationDirectory RuntimeDirectoryMode StateDirectoryMode " +
      "CacheDirectoryMode LogsDirectoryMode ConfigurationDirectoryMode RuntimeDirectoryPreserve PassEnvironment UnsetEnvironment " +
      "LoadCredential SetCredential LoadCredentialEncrypted SetCredentialEncrypted FileDescriptorStoreMax"
    ).split(" "),
  ),
  Install: new Set(["Alias", "Also", "DefaultInstance"]),
};
const NOT_ENFORCED_PATTERN: Record<string, RegExp> = {
  Unit: /^(Condition|Assert)[A-Z]/,
  Service: /^(Limit[A-Z]+|(Protect|Private|Restrict)[A-Za-z]+)$/,
  Install: /^$/,
};

/** Parses a .service unit file; throws UnitFileError for anything the host cannot run faithfully. */
export function parseUnitFile(unit: string, text: string): UnitSpec {
  if (!unit.endsWith(".service")) fail({ unit }, null, "only .service units can be run without systemd");
  const parts = parseUnitName(unit, ["service"]);
  if (!parts) fail({ unit }, null, "not a valid unit name");
  const ctx: UnitContext = { unit, name: parts.name, prefix: parts.prefix, instance: parts.instance ?? "" };
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_TEXT) fail(ctx, null, `unit file is ${bytes} bytes, over the 256 KiB limit`);

  const spec: UnitSpec = {
    unit,
    description: null,
    type: "simple",
    execStartPre: [],
    execStart: [],
    execStartPost: [],
    execStop: [],
    environment: {},
    environmentFiles: [],
    workingDirectory: null,
    user: null,
    group: null,
    restart: "no",
    restartMs: 100,
    timeoutStopMs: 90_000,
    killSignal: "SIGTERM",
    killMode: "control-group",
    successExitStatus: [],
    remainAfterExit: false,
    startLimitIntervalMs: 10_000,
    startLimitBurst: 5,
    wantedBy: [],
    requiredBy: [],
    hasInstall: false,
    notEnforced: [],
    ignored: [],
  };
  let serviceLine: number | null = null;
  let restartLine = 0;
  let otherInstall = false;
  const execStartLines: number[] = [];
  let section: string | null = null;

  for (const { line, text: l } of logicalLines(ctx, text)) {
    if (l === "" || l.startsWith("#") || l.startsWith(";")) continue;
    if (l.startsWith("[")) {
      if (!l.endsWith("]") || l.length < 3) fail(ctx, line, `malformed section header ${JSON.stringify(l)}`);
      section = l.slice(1, -1);
      if (section === "Service") serviceLine ??= line;
      continue;
    }
    const eq = l.indexOf("=");
    if (eq < 0) fail(ctx, line, `expected Key=Value, got ${JSON.stringify(l.slice(0, 80))}`);
    const key = l.slice(0, eq).trim();
    const value = l.slice(eq + 1).trim();
    if (!/^[A-Za-z0-9_-]+$/.test(key)) fail(ctx, line, `invalid key ${JSON.stringify(key)}`);
    if (section === null) fail(ctx, line, `${key}= appears before any section`);
    const id = `${section}.${key}`;
    if (section !== "Unit" && section !== "Service" && section !== "Install") {
      if (!section.startsWith("X-")) pushOnce(spec.ignored, id);
      continue;
    }
    switch (id) {
      case "Unit.Description":
        spec.description = value === "" ? null : value;
        break;
      case "Unit.StartLimitIntervalSec":
      case "Service.StartLimitInterval":
      case "Service.StartLimitIntervalSec":
        spec.startLimitIntervalMs = timespanMs(ctx, line, key, value, true);
        break;
      case "Unit.StartLimitBurst":
      case "Service.StartLimitBurst":
        if (!/^\d{1,9}$/.test(value)) fail(ctx, line, `${key}=${value} is not a non-negative integer`);
        spec.startLimitBurst = Number(value);
        break;
      case "Service.Type": {
        const t = value === "notify-reload" ? "notify" : value;
        if (t === "forking") fail(ctx, line, "Type=forking is not supported without systemd (the host supervises the main process itself)");
        if (t === "dbus") fail(ctx, line, "Type=dbus is not supported without systemd (there is no bus to watch for the name)");
        if (!includes(TYPES, t)) fail(ctx, line, `unknown Type=${value}`);
        spec.type = t;
        break;
      }
      case "Service.PIDFile":
      case "Service.BusName":
      // biome-ignore lint/suspicious/noFallthroughSwitchClause: fail() throws (it returns never)
      case "Service.Sockets":
        fail(
          ctx,
          line,
          `${key}= is not supported without systemd (${key === "Sockets" ? "no socket activation" : key === "PIDFile" ? "no forking services" : "no D-Bus"})`,
        );
      case "Service.ExecStartPre":
      case "Service.ExecStart":
      case "Service.ExecStartPost":
      case "Service.ExecStop": {
        const list = spec[LIST_EXEC[key as keyof typeof LIST_EXEC]];
        if (value === "") {
          list.length = 0;
          if (key === "ExecStart") execStartLines.length = 0;
          break;
        }
        list.push(parseExecLine(ctx, line, value));
        if (key === "ExecStart") execStartLines.push(line);
        break;
      }
      case "Service.Environment":
        if (value === "") {
          spec.environment = {};
          break;
        }
        for (const word of splitWords(ctx, line, value)) {
          const w = specifiers(ctx, line, word);
          const i = w.indexOf("=");
          if (i < 0 || !ENV_NAME.test(w.slice(0, i))) fail(ctx, line, `Environment= assignment ${JSON.stringify(w)} is not KEY=VALUE with a valid name`);
          spec.environment[w.slice(0, i)] = w.slice(i + 1);
        }
        break;
      case "Service.EnvironmentFile": {
        if (value === "") {
          spec.environmentFiles = [];
          break;
        }
        const optional = value.startsWith("-");
        const path = specifiers(ctx, line, optional ? value.slice(1) : value);
        if (!path.startsWith("/")) fail(ctx, line, `EnvironmentFile=${value} is not an absolute path`);
        spec.environmentFiles.push({ path, optional });
        break;
      }
      case "Service.WorkingDirectory": {
        if (value === "") {
          spec.workingDirectory = null;
          break;
        }
        const optional = value.startsWith("-");
        const path = specifiers(ctx, line, optional ? value.slice(1) : value);
        if (path === "~") fail(ctx, line, "WorkingDirectory=~ is not supported without systemd (the user's home is not resolved)");
        if (!path.startsWith("/")) fail(ctx, line, `WorkingDirectory=${value} is not an absolute path`);
        spec.workingDirectory = { path, optional };
        break;
      }
      case "Service.User":
        spec.user = value === "" ? null : specifiers(ctx, line, value);
        break;
      case "Service.Group":
        spec.group = value === "" ? null : specifiers(ctx, line, value);
        break;
      case "Service.Restart": {
        const r = value === "on-watchdog" ? "no" : value; // no watchdog here, so it never fires
        if (!includes(RESTART, r)) fail(ctx, line, `unknown Restart=${value}`);
        spec.restart = r;
        restartLine = line;
        break;
      }
      case "Service.RestartSec":
        spec.restartMs = timespanMs(ctx, line, key, value, false);
        break;
      case "Service.TimeoutStopSec":
      case "Service.TimeoutSec": {
        const ms = timespanMs(ctx, line, key, value, true);
        spec.timeoutStopMs = ms === 0 ? Infinity : ms;
        break;
      }
      case "Service.KillSignal":
        spec.killSignal = signal(ctx, line, value);
        break;
      case "Service.KillMode":
        if (value === "none") fail(ctx, line, "KillMode=none is not supported without systemd (the host must be able to stop what it started)");
        if (!includes(KILL_MODES, value)) fail(ctx, line, `unknown KillMode=${value}`);
        spec.killMode = value;
        break;
      case "Service.SuccessExitStatus":
        if (value === "") {
          spec.successExitStatus = [];
          break;
        }
        for (const w of value.split(/\s+/)) {
          if (/^\d{1,3}$/.test(w) && Number(w) <= 255) spec.successExitStatus.push(Number(w));
          else if (!isSignal(w)) fail(ctx, line, `SuccessExitStatus= entry ${JSON.stringify(w)} is neither an exit status nor a signal`);
        }
        break;
      case "Service.RemainAfterExit":
        spec.remainAfterExit = bool(ctx, line, key, value);
        break;
      case "Install.WantedBy":
      case "Install.RequiredBy": {
        const list = key === "WantedBy" ? spec.wantedBy : spec.requiredBy;
        if (value === "") list.length = 0;
        else for (const w of value.split(/\s+/)) list.push(specifiers(ctx, line, w));
        break;
      }
      default:
        if (NOT_ENFORCED[section]!.has(key) || NOT_ENFORCED_PATTERN[section]!.test(key)) {
          pushOnce(spec.notEnforced, id);
          if (section === "Install" && (key === "Alias" || key === "Also") && value !== "") otherInstall = true;
        } else pushOnce(spec.ignored, id);
    }
  }

  if (serviceLine === null) fail(ctx, null, "no [Service] section");
  if (spec.execStart.length === 0) fail(ctx, serviceLine, "no ExecStart= in [Service]");
  if (spec.type !== "oneshot" && spec.execStart.length > 1) {
    fail(ctx, execStartLines[1]!, `a second ExecStart= is only allowed with Type=oneshot (Type=${spec.type})`);
  }
  if (spec.type === "oneshot" && (spec.restart === "always" || spec.restart === "on-success")) {
    fail(ctx, restartLine, `Restart=${spec.restart} is not allowed for Type=oneshot`);
  }
  spec.hasInstall = otherInstall || spec.wantedBy.length > 0 || spec.requiredBy.length > 0;
  return spec;
}

function includes<T extends string>(list: readonly T[], v: string): v is T {
  return (list as readonly string[]).includes(v);
}
function pushOnce(list: string[], v: string): void {
  if (!list.includes(v)) list.push(v);
}
