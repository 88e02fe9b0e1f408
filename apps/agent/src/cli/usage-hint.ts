// Bad flags said in words: `unknown option --tokn (did you mean --token?)` and the command's own
// usage line, instead of Node's parse error and the whole usage.

/** Levenshtein distance, small strings only (option names). */
export function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return row[b.length]!;
}

/** The closest known option, if one is close enough to be what was meant. */
export function suggestOption(given: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const option of known) {
    const d = option.startsWith(given) || given.startsWith(option) ? 1 : editDistance(given, option);
    if (d < bestDistance) {
      best = option;
      bestDistance = d;
    }
  }
  return best !== null && bestDistance <= Math.max(1, Math.min(3, Math.floor(given.length / 3))) ? best : null;
}

/** The lines of `usage` that describe `command` (its synopsis and description), or null. */
export function commandUsage(usage: string, command: string): string | null {
  const lines = usage.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`  ${command} `) || l === `  ${command}`);
  if (start < 0) return null;
  const out = [lines[start]!];
  for (const l of lines.slice(start + 1)) {
    if (!/^ {10,}\S/.test(l)) break;
    out.push(l);
  }
  return out.map((l) => l.replace(/\s+$/, "")).join("\n");
}

/** What a parseArgs failure means, in words. Null when it is not one this knows. */
export function describeParseError(
  err: unknown,
  argv: readonly string[],
  opts: { usage: string; commands: readonly string[]; options: Record<string, readonly string[]>; common: readonly string[] },
): string | null {
  const e = err as { code?: string; message?: string };
  const command = argv.find((a) => opts.commands.includes(a));
  const usage = command ? commandUsage(opts.usage, command) : null;
  const tail = usage ? `\nusage: mesh-host${usage.trimStart().startsWith(command!) ? " " : ""}${usage.trimStart()}\n` : "\nrun `mesh-host --help` for usage\n";
  if (e?.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const given = /'(-[^']+)'/.exec(e.message ?? "")?.[1] ?? "?";
    const name = given.replace(/^-+/, "").split("=")[0]!;
    const known = [...(command ? (opts.options[command] ?? []) : Object.values(opts.options).flat()), ...opts.common, "help"];
    const guess = suggestOption(name, [...new Set(known)]);
    return `mesh-host: unknown option ${given}${guess ? ` (did you mean --${guess}?)` : ""}${tail}`;
  }
  if (e?.code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    const option = /'(--?[\w-]+)/.exec(e.message ?? "")?.[1];
    return `mesh-host: ${option ? `option ${option} needs a value` : (e.message ?? "invalid option value")}${tail}`;
  }
  return null;
}
