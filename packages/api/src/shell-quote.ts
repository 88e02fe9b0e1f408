// The one way a value enters a shell script or a command we print: single-quoted,
// with embedded single quotes closed, escaped and reopened; plain words stay readable.

const PLAIN = /^[A-Za-z0-9_@%+=:,./-]+$/;

export function shellQuote(value: string): string {
  if (value !== "" && PLAIN.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A command line from its words, each quoted. */
export function shellCommand(words: readonly string[]): string {
  return words.map(shellQuote).join(" ");
}
