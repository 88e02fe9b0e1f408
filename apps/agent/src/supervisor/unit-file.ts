// Parser for the subset of systemd unit-file syntax (systemd.syntax(7), systemd.service(5)) that the
// host's own supervisor can honour when systemd is not PID 1. Pure: no I/O, no process spawning.
import { constants } from "node:os";

/**
 * One Exec*= command line. `-` prefix => ignoreFailure. A `:` prefix (no variable expansion) is
 * stripped and every `$` in argv[1..] is doubled, so expandCommand() yields the text literally.
 */
export interface UnitCommand { argv: string[]; ignoreFailure: boolean }
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

/** A unit file the host cannot run; the message names the unit, the line and the problem. */
export class UnitFileError extends Error {}

const MAX_TEXT = 256 * 1024;
const MAX_LINE = 64 * 1024;
const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const RESTART = ["no", "always", "on-success", "on-failure", "on-abnormal", "on-abort"] as const;
const TYPES = ["simple", "exec", "oneshot", "notify", "idle"] as const;
const KILL_MODES = ["control-group", "mixed", "process"] as const;
const LIST_EXEC = { ExecStartPre: "execStartPre", ExecStart: "execStart", ExecStartPost: "execStartPost", ExecStop: "execStop" } as const;

const NOT_ENFORCED: Record<string, Set<string>> = {
  Unit: new Set(("Documentation After Before Wants Requires Requisite BindsTo PartOf Upholds Conflicts OnFailure OnSuccess " +
    "PropagatesReloadTo ReloadPropagatedFrom JoinsNamespaceOf RequiresMountsFor DefaultDependencies StopWhenUnneeded " +
    "RefuseManualStart RefuseManualStop AllowIsolate IgnoreOnIsolate JobTimeoutSec JobRunningTimeoutSec StartLimitAction " +
    "FailureAction SuccessAction CollectMode").split(" ")),
  Service: new Set(("ExecReload ExecStopPost ExecCondition TimeoutStartSec TimeoutAbortSec RuntimeMaxSec WatchdogSec NotifyAccess " +
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
    "LoadCredential SetCredential LoadCredentialEncrypted SetCredentialEncrypted FileDescriptorStoreMax").split(" ")),
  Install: new Set(["Alias", "Also", "DefaultInstance"]),
};
const NOT_ENFORCED_PATTERN: Record<string, RegExp> = {
  Unit: /^(Condition|Assert)[A-Z]/,
  Service: /^(Limit[A-Z]+|(Protect|Private|Restrict)[A-Za-z]+)$/,
  Install: /^$/,
};

interface Ctx { unit: string; name: string; prefix: string; instance: string }

function fail(ctx: { unit: string }, line: number | null, msg: string): never {
  throw new UnitFileError(line === null ? `${ctx.unit}: ${msg}` : `${ctx.unit} line ${line}: ${msg}`);
}

/** Parses a .service unit file; throws UnitFileError for anything the host cannot run faithfully. */
export function parseUnitFile(unit: string, text: string): UnitSpec {
  if (!unit.endsWith(".service")) fail({ unit }, null, "only .service units can be run without systemd");
  const name = unit.slice(0, -".service".length);
  if (!/^[A-Za-z0-9:_.\\-]+(@[A-Za-z0-9:_.\\-]*)?$/.test(name)) fail({ unit }, null, "not a valid unit name");
  const at = name.indexOf("@");
  const ctx: Ctx = { unit, name, prefix: at < 0 ? name : name.slice(0, at), instance: at < 0 ? "" : name.slice(at + 1) };
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > MAX_TEXT) fail(ctx, null, `unit file is ${bytes} bytes, over the 256 KiB limit`);

  const spec: UnitSpec = {
    unit, description: null, type: "simple", execStartPre: [], execStart: [], execStartPost: [], execStop: [],
    environment: {}, environmentFiles: [], workingDirectory: null, user: null, group: null, restart: "no", restartMs: 100,
    timeoutStopMs: 90_000, killSignal: "SIGTERM", killMode: "control-group", successExitStatus: [], remainAfterExit: false,
    startLimitIntervalMs: 10_000, startLimitBurst: 5, wantedBy: [], requiredBy: [], hasInstall: false, notEnforced: [], ignored: [],
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
      case "Unit.Description": spec.description = value === "" ? null : value; break;
      case "Unit.StartLimitIntervalSec": case "Service.StartLimitInterval": case "Service.StartLimitIntervalSec":
        spec.startLimitIntervalMs = timespanMs(ctx, line, key, value, true); break;
      case "Unit.StartLimitBurst": case "Service.StartLimitBurst":
        if (!/^\d{1,9}$/.test(value)) fail(ctx, line, `${key}=${value} is not a non-negative integer`);
        spec.startLimitBurst = Number(value); break;
      case "Service.Type": {
        const t = value === "notify-reload" ? "notify" : value;
        if (t === "forking") fail(ctx, line, "Type=forking is not supported without systemd (the host supervises the main process itself)");
        if (t === "dbus") fail(ctx, line, "Type=dbus is not supported without systemd (there is no bus to watch for the name)");
        if (!includes(TYPES, t)) fail(ctx, line, `unknown Type=${value}`);
        spec.type = t; break;
      }
      case "Service.PIDFile":
      case "Service.BusName":
      // biome-ignore lint/suspicious/noFallthroughSwitchClause: fail() throws (it returns never)
      case "Service.Sockets":
        fail(ctx, line, `${key}= is not supported without systemd (${key === "Sockets" ? "no socket activation" : key === "PIDFile" ? "no forking services" : "no D-Bus"})`);
      case "Service.ExecStartPre": case "Service.ExecStart": case "Service.ExecStartPost": case "Service.ExecStop": {
        const list = spec[LIST_EXEC[key as keyof typeof LIST_EXEC]];
        if (value === "") { list.length = 0; if (key === "ExecStart") execStartLines.length = 0; break; }
        list.push(parseCommand(ctx, line, value));
        if (key === "ExecStart") execStartLines.push(line);
        break;
      }
      case "Service.Environment":
        if (value === "") { spec.environment = {}; break; }
        for (const word of splitWords(ctx, line, value)) {
          const w = specifiers(ctx, line, word);
          const i = w.indexOf("=");
          if (i < 0 || !ENV_KEY.test(w.slice(0, i))) fail(ctx, line, `Environment= assignment ${JSON.stringify(w)} is not KEY=VALUE with a valid name`);
          spec.environment[w.slice(0, i)] = w.slice(i + 1);
        }
        break;
      case "Service.EnvironmentFile": {
        if (value === "") { spec.environmentFiles = []; break; }
        const optional = value.startsWith("-");
        const path = specifiers(ctx, line, optional ? value.slice(1) : value);
        if (!path.startsWith("/")) fail(ctx, line, `EnvironmentFile=${value} is not an absolute path`);
        spec.environmentFiles.push({ path, optional }); break;
      }
      case "Service.WorkingDirectory": {
        if (value === "") { spec.workingDirectory = null; break; }
        const optional = value.startsWith("-");
        const path = specifiers(ctx, line, optional ? value.slice(1) : value);
        if (path === "~") fail(ctx, line, "WorkingDirectory=~ is not supported without systemd (the user's home is not resolved)");
        if (!path.startsWith("/")) fail(ctx, line, `WorkingDirectory=${value} is not an absolute path`);
        spec.workingDirectory = { path, optional }; break;
      }
      case "Service.User": spec.user = value === "" ? null : specifiers(ctx, line, value); break;
      case "Service.Group": spec.group = value === "" ? null : specifiers(ctx, line, value); break;
      case "Service.Restart": {
        const r = value === "on-watchdog" ? "no" : value; // no watchdog here, so it never fires
        if (!includes(RESTART, r)) fail(ctx, line, `unknown Restart=${value}`);
        spec.restart = r; restartLine = line; break;
      }
      case "Service.RestartSec": spec.restartMs = timespanMs(ctx, line, key, value, false); break;
      case "Service.TimeoutStopSec": case "Service.TimeoutSec": {
        const ms = timespanMs(ctx, line, key, value, true);
        spec.timeoutStopMs = ms === 0 ? Infinity : ms; break;
      }
      case "Service.KillSignal": spec.killSignal = signal(ctx, line, value); break;
      case "Service.KillMode":
        if (value === "none") fail(ctx, line, "KillMode=none is not supported without systemd (the host must be able to stop what it started)");
        if (!includes(KILL_MODES, value)) fail(ctx, line, `unknown KillMode=${value}`);
        spec.killMode = value; break;
      case "Service.SuccessExitStatus":
        if (value === "") { spec.successExitStatus = []; break; }
        for (const w of value.split(/\s+/)) {
          if (/^\d{1,3}$/.test(w) && Number(w) <= 255) spec.successExitStatus.push(Number(w));
          else if (!isSignal(w)) fail(ctx, line, `SuccessExitStatus= entry ${JSON.stringify(w)} is neither an exit status nor a signal`);
        }
        break;
      case "Service.RemainAfterExit": spec.remainAfterExit = bool(ctx, line, key, value); break;
      case "Install.WantedBy": case "Install.RequiredBy": {
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

/** Joins continuation lines and drops comment lines inside them; yields trimmed lines with their first line number. */
function* logicalLines(ctx: Ctx, text: string): Generator<{ line: number; text: string }> {
  const lines = text.split("\n");
  let acc: string | null = null;
  let start = 0;
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i]!.replace(/\r$/, "");
    if (Buffer.byteLength(l, "utf8") > MAX_LINE) fail(ctx, i + 1, "line is longer than 64 KiB");
    const trimmed = l.trim();
    if (acc !== null && (trimmed.startsWith("#") || trimmed.startsWith(";"))) continue;
    const backslashes = /\\*$/.exec(l)![0].length;
    const continues = backslashes % 2 === 1 && !(acc === null && (trimmed.startsWith("#") || trimmed.startsWith(";")));
    if (continues) l = l.slice(0, -1) + " ";
    if (acc === null) { acc = l; start = i + 1; } else acc += l;
    if (acc.length > MAX_LINE) fail(ctx, start, "line (with continuations) is longer than 64 KiB");
    if (!continues) { yield { line: start, text: acc.trim() }; acc = null; }
  }
  if (acc !== null) yield { line: start, text: acc.trim() };
}

/** Splits a value into words with systemd quoting: "..." and '...' anywhere in a word, C-style escapes. */
function splitWords(ctx: Ctx, line: number, s: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (true) {
    while (i < s.length && /\s/.test(s[i]!)) i++;
    if (i >= s.length) return words;
    let w = "";
    let quote: string | null = null;
    for (; i < s.length; i++) {
      const c = s[i]!;
      if (c === "\\") {
        const [text, used] = unescapeAt(ctx, line, s, i);
        w += text; i += used - 1;
      } else if (quote !== null) {
        if (c === quote) quote = null; else w += c;
      } else if (/\s/.test(c)) break;
      else if (c === '"' || c === "'") quote = c;
      else w += c;
    }
    if (quote !== null) fail(ctx, line, `unterminated ${quote} quote`);
    words.push(w);
  }
}

const ESCAPES: Record<string, string> = { "\\": "\\", '"': '"', "'": "'", n: "\n", t: "\t", r: "\r", s: " ", " ": " ", a: "\x07", b: "\b", f: "\f", v: "\v" };
function unescapeAt(ctx: Ctx, line: number, s: string, i: number): [string, number] {
  const c = s[i + 1];
  if (c === undefined) fail(ctx, line, "backslash at end of value");
  if (c in ESCAPES) return [ESCAPES[c]!, 2];
  const hex = /^x([0-9a-fA-F]{2})/.exec(s.slice(i + 1, i + 4));
  if (hex) return [String.fromCharCode(parseInt(hex[1]!, 16)), 4];
  fail(ctx, line, `unsupported escape \\${c}`);
}

function parseCommand(ctx: Ctx, line: number, value: string): UnitCommand {
  const words = splitWords(ctx, line, value);
  let first = words[0] ?? "";
  let ignoreFailure = false;
  let literal = false;
  for (;;) {
    const p = first[0];
    if (p === "@") fail(ctx, line, "the @ prefix (replacing argv[0]) is not supported without systemd");
    if (p === "-") ignoreFailure = true;
    else if (p === ":") literal = true;
    else if (p !== "+" && p !== "!") break; // + ! !! are moot: the host already runs as root
    first = first.slice(1);
  }
  if (first === "") fail(ctx, line, "empty command");
  const argv = [first, ...words.slice(1)].map((w) => specifiers(ctx, line, w));
  if (argv[0]!.includes("/") && !argv[0]!.startsWith("/")) fail(ctx, line, `command ${JSON.stringify(argv[0])} must be an absolute path or a bare program name`);
  return { argv: literal ? argv.map((a, i) => (i === 0 ? a : a.replaceAll("$", () => "$$"))) : argv, ignoreFailure };
}

/** Resolves %% %n %N %p %i; any other specifier is refused. */
function specifiers(ctx: Ctx, line: number, s: string): string {
  return s.replace(/%(.?)/gs, (_, c: string) => {
    switch (c) {
      case "%": return "%";
      case "n": return ctx.unit;
      case "N": return ctx.name;
      case "p": return ctx.prefix;
      case "i": return ctx.instance;
      default: return fail(ctx, line, c === "" ? "lone % at end of value (write %% for a percent sign)" : `specifier %${c} is not supported without systemd`);
    }
  });
}

const TIME_UNITS: Record<string, number> = {
  us: 0.001, usec: 0.001, ms: 1, msec: 1, "": 1000, s: 1000, sec: 1000, second: 1000, seconds: 1000,
  m: 60_000, min: 60_000, minute: 60_000, minutes: 60_000, h: 3_600_000, hr: 3_600_000, hour: 3_600_000, hours: 3_600_000,
  d: 86_400_000, day: 86_400_000, days: 86_400_000,
};
function timespanMs(ctx: Ctx, line: number, key: string, value: string, allowInfinity: boolean): number {
  if (value === "infinity") {
    if (allowInfinity) return Infinity;
    fail(ctx, line, `${key}=infinity is not allowed`);
  }
  const re = /\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*/gy;
  let total = 0;
  let pos = 0;
  for (let m; (m = re.exec(value)) !== null; pos = re.lastIndex) {
    const unit = TIME_UNITS[m[2]!];
    if (unit === undefined) fail(ctx, line, `${key}=${value}: unknown time unit ${JSON.stringify(m[2])}`);
    total += Number(m[1]) * unit;
  }
  if (value === "" || pos !== value.length) fail(ctx, line, `${key}=${value} is not a valid time span`);
  return Math.round(total);
}

function isSignal(s: string): boolean {
  const name = s.startsWith("SIG") ? s : `SIG${s}`;
  return Object.hasOwn(constants.signals, name);
}
function signal(ctx: Ctx, line: number, value: string): NodeJS.Signals {
  if (/^\d+$/.test(value)) {
    const found = Object.entries(constants.signals).find(([, n]) => n === Number(value));
    if (found) return found[0] as NodeJS.Signals;
  } else if (isSignal(value)) return (value.startsWith("SIG") ? value : `SIG${value}`) as NodeJS.Signals;
  fail(ctx, line, `KillSignal=${value} is not a known signal`);
}

function bool(ctx: Ctx, line: number, key: string, value: string): boolean {
  const v = value.toLowerCase();
  if (["yes", "true", "on", "1"].includes(v)) return true;
  if (["no", "false", "off", "0"].includes(v)) return false;
  fail(ctx, line, `${key}=${value} is not a boolean`);
}

function includes<T extends string>(list: readonly T[], v: string): v is T {
  return (list as readonly string[]).includes(v);
}
function pushOnce(list: string[], v: string): void {
  if (!list.includes(v)) list.push(v);
}

/**
 * Parses an EnvironmentFile= as systemd does: KEY=VALUE lines, # and ; comment lines, single and
 * double quotes (possibly spanning lines), backslash continuation. Lines that do not parse
 * (no "=", invalid name, `export KEY=...`, unterminated quote) are skipped.
 */
export function parseEnvironmentFile(text: string): Record<string, string> {
  const s = text.replace(/\r\n/g, "\n");
  const out: Record<string, string> = {};
  let i = 0;
  while (i < s.length) {
    while (i < s.length && /\s/.test(s[i]!)) i++;
    if (i >= s.length) break;
    const eol = s.indexOf("\n", i) < 0 ? s.length : s.indexOf("\n", i);
    const eq = s.indexOf("=", i);
    if (s[i] === "#" || s[i] === ";" || eq < 0 || eq > eol) { i = eol + 1; continue; }
    const key = s.slice(i, eq).trim();
    i = eq + 1;
    while (s[i] === " " || s[i] === "\t") i++;
    let value = "";
    let kept = 0; // length of value that trailing-whitespace trimming must not touch
    let ok = true;
    while (i < s.length && s[i] !== "\n") {
      const c = s[i]!;
      if (c === "'" || c === '"') {
        const close = c === "'" ? s.indexOf("'", i + 1) : findDoubleQuoteEnd(s, i + 1);
        if (close < 0) { ok = false; i = s.length; break; }
        const body = s.slice(i + 1, close);
        value += c === "'" ? body : body.replace(/\\([\n"\\`$])/g, (_, e: string) => (e === "\n" ? "" : e));
        kept = value.length; i = close + 1;
      } else if (c === "\\") {
        if (s[i + 1] === "\n") i += 2;
        else { if (i + 1 < s.length) value += s[i + 1]; kept = value.length; i += 2; }
      } else { value += c; i++; }
    }
    i++;
    if (ok && ENV_KEY.test(key)) out[key] = value.slice(0, kept) + value.slice(kept).trimEnd();
  }
  return out;
}
function findDoubleQuoteEnd(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    if (s[i] === "\\") i++;
    else if (s[i] === '"') return i;
  }
  return -1;
}

/**
 * Expands environment variables in a command the way systemd does: a word that is exactly $VAR
 * becomes the value split on whitespace (no words if empty or unset); ${VAR} inside a word is
 * replaced in place (unset => ""); "$$" => "$". argv[0] (the program) is not expanded.
 */
export function expandCommand(cmd: UnitCommand, env: Record<string, string>): string[] {
  const get = (k: string) => (Object.hasOwn(env, k) ? env[k]! : "");
  const out: string[] = [];
  cmd.argv.forEach((arg, i) => {
    if (i === 0) { out.push(arg); return; }
    const whole = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(arg);
    if (whole) out.push(...get(whole[1]!).split(/\s+/).filter((w) => w !== ""));
    else out.push(arg.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, k?: string) => (k === undefined ? "$" : get(k))));
  });
  return out;
}
