// EnvironmentFile= as systemd reads it (KEY=VALUE lines, comments, quotes, continuations), and the rule
// for a variable's name. Pure: the supervisor reads the file at each start and hands the text here.

/** A name an assignment may set, in Environment= and in an EnvironmentFile=. */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

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
    if (s[i] === "#" || s[i] === ";" || eq < 0 || eq > eol) {
      i = eol + 1;
      continue;
    }
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
        if (close < 0) {
          ok = false;
          i = s.length;
          break;
        }
        const body = s.slice(i + 1, close);
        value += c === "'" ? body : body.replace(/\\([\n"\\`$])/g, (_, e: string) => (e === "\n" ? "" : e));
        kept = value.length;
        i = close + 1;
      } else if (c === "\\") {
        if (s[i + 1] === "\n") i += 2;
        else {
          if (i + 1 < s.length) value += s[i + 1];
          kept = value.length;
          i += 2;
        }
      } else {
        value += c;
        i++;
      }
    }
    i++;
    if (ok && ENV_NAME.test(key)) out[key] = value.slice(0, kept) + value.slice(kept).trimEnd();
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
