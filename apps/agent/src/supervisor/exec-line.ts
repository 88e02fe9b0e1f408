// One Exec*= line of a unit: its prefixes and words when the file is parsed, and $VAR expansion
// against the environment when the command runs, as systemd.service(5) "Command lines" says. Pure.
import { fail, specifiers, splitWords, type UnitContext } from "./unit-syntax";

/**
 * One Exec*= command line. `-` prefix => ignoreFailure. A `:` prefix (no variable expansion) is
 * stripped and every `$` in argv[1..] is doubled, so expandCommand() yields the text literally.
 */
export interface UnitCommand {
  argv: string[];
  ignoreFailure: boolean;
}

/** The value of an Exec*= line: its prefixes, its words (quoting and escapes), its specifiers. */
export function parseExecLine(ctx: UnitContext, line: number, value: string): UnitCommand {
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
  if (argv[0]!.includes("/") && !argv[0]!.startsWith("/"))
    fail(ctx, line, `command ${JSON.stringify(argv[0])} must be an absolute path or a bare program name`);
  return { argv: literal ? argv.map((a, i) => (i === 0 ? a : a.replaceAll("$", () => "$$"))) : argv, ignoreFailure };
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
    if (i === 0) {
      out.push(arg);
      return;
    }
    const whole = /^\$([A-Za-z_][A-Za-z0-9_]*)$/.exec(arg);
    if (whole)
      out.push(
        ...get(whole[1]!)
          .split(/\s+/)
          .filter((w) => w !== ""),
      );
    else out.push(arg.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, k?: string) => (k === undefined ? "$" : get(k))));
  });
  return out;
}
