// The lexical rules of a unit file (systemd.syntax(7)): logical lines with continuations, quoting
// and escapes, specifiers, time spans, signals and booleans; and the one error a unit file gets. Pure.
import { constants } from "node:os";

/** A unit file the host cannot run; the message names the unit, the line and the problem. */
export class UnitFileError extends Error {}

const MAX_LINE = 64 * 1024;

/** The unit being parsed, for specifiers and for the messages of its errors. */
export interface UnitContext {
  unit: string;
  name: string;
  prefix: string;
  instance: string;
}

export function fail(ctx: { unit: string }, line: number | null, msg: string): never {
  throw new UnitFileError(line === null ? `${ctx.unit}: ${msg}` : `${ctx.unit} line ${line}: ${msg}`);
}

/** Joins continuation lines and drops comment lines inside them; yields trimmed lines with their first line number. */
export function* logicalLines(ctx: UnitContext, text: string): Generator<{ line: number; text: string }> {
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
    if (acc === null) {
      acc = l;
      start = i + 1;
    } else acc += l;
    if (acc.length > MAX_LINE) fail(ctx, start, "line (with continuations) is longer than 64 KiB");
    if (!continues) {
      yield { line: start, text: acc.trim() };
      acc = null;
    }
  }
  if (acc !== null) yield { line: start, text: acc.trim() };
}

/** Splits a value into words with systemd quoting: "..." and '...' anywhere in a word, C-style escapes. */
export function splitWords(ctx: UnitContext, line: number, s: string): string[] {
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
        w += text;
        i += used - 1;
      } else if (quote !== null) {
        if (c === quote) quote = null;
        else w += c;
      } else if (/\s/.test(c)) break;
      else if (c === '"' || c === "'") quote = c;
      else w += c;
    }
    if (quote !== null) fail(ctx, line, `unterminated ${quote} quote`);
    words.push(w);
  }
}

const ESCAPES: Record<string, string> = { "\\": "\\", '"': '"', "'": "'", n: "\n", t: "\t", r: "\r", s: " ", " ": " ", a: "\x07", b: "\b", f: "\f", v: "\v" };
function unescapeAt(ctx: UnitContext, line: number, s: string, i: number): [string, number] {
  const c = s[i + 1];
  if (c === undefined) fail(ctx, line, "backslash at end of value");
  if (c in ESCAPES) return [ESCAPES[c]!, 2];
  const hex = /^x([0-9a-fA-F]{2})/.exec(s.slice(i + 1, i + 4));
  if (hex) return [String.fromCharCode(parseInt(hex[1]!, 16)), 4];
  fail(ctx, line, `unsupported escape \\${c}`);
}

/** Resolves %% %n %N %p %i; any other specifier is refused. */
export function specifiers(ctx: UnitContext, line: number, s: string): string {
  return s.replace(/%(.?)/gs, (_, c: string) => {
    switch (c) {
      case "%":
        return "%";
      case "n":
        return ctx.unit;
      case "N":
        return ctx.name;
      case "p":
        return ctx.prefix;
      case "i":
        return ctx.instance;
      default:
        return fail(ctx, line, c === "" ? "lone % at end of value (write %% for a percent sign)" : `specifier %${c} is not supported without systemd`);
    }
  });
}

const TIME_UNITS: Record<string, number> = {
  us: 0.001,
  usec: 0.001,
  ms: 1,
  msec: 1,
  "": 1000,
  s: 1000,
  sec: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};
export function timespanMs(ctx: UnitContext, line: number, key: string, value: string, allowInfinity: boolean): number {
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

export function isSignal(s: string): boolean {
  const name = s.startsWith("SIG") ? s : `SIG${s}`;
  return Object.hasOwn(constants.signals, name);
}
export function signal(ctx: UnitContext, line: number, value: string): NodeJS.Signals {
  if (/^\d+$/.test(value)) {
    const found = Object.entries(constants.signals).find(([, n]) => n === Number(value));
    if (found) return found[0] as NodeJS.Signals;
  } else if (isSignal(value)) return (value.startsWith("SIG") ? value : `SIG${value}`) as NodeJS.Signals;
  fail(ctx, line, `KillSignal=${value} is not a known signal`);
}

export function bool(ctx: UnitContext, line: number, key: string, value: string): boolean {
  const v = value.toLowerCase();
  if (["yes", "true", "on", "1"].includes(v)) return true;
  if (["no", "false", "off", "0"].includes(v)) return false;
  fail(ctx, line, `${key}=${value} is not a boolean`);
}
