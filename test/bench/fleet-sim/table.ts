// The bench's output: a figure | measured | goal table printed to stdout and written
// to docs/benchmarks.md as one dated section that replaces the previous run's.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

export interface Row {
  figure: string;
  measured: string;
  goal: string;
}

export function markdownTable(rows: Row[]): string {
  const esc = (s: string) => s.replace(/\|/g, "\\|");
  return ["| figure | measured | goal |", "| --- | --- | --- |", ...rows.map((r) => `| ${esc(r.figure)} | ${esc(r.measured)} | ${esc(r.goal)} |`)].join("\n");
}

export function machine(): string {
  const cpu = os.cpus()[0]?.model.trim() ?? "unknown CPU";
  return `${os.cpus().length} cores (${cpu}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${os.type()} ${os.release()}`;
}

const MARK = "## Fleet simulator";

/** Replaces this bench's section for `what` (e.g. "10,000 nodes, NATS bus"), or appends one, in docs/benchmarks.md. */
export function writeSection(repoRoot: string, what: string, body: string): string {
  const file = path.join(repoRoot, "docs", "benchmarks.md");
  const title = `${MARK}, ${what}`;
  const section = `${title} (\`npm run bench\`, ${new Date().toISOString().slice(0, 10)})\n\n${body.trim()}\n`;
  const text = fs.readFileSync(file, "utf8");
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.startsWith(title + " ("));
  let out: string;
  if (start === -1) {
    out = text.replace(/\n*$/, "\n\n") + section;
  } else {
    let end = lines.findIndex((l, i) => i > start && l.startsWith("## "));
    if (end === -1) end = lines.length;
    out = [...lines.slice(0, start), ...section.split("\n"), ...lines.slice(end)].join("\n").replace(/\n{3,}/g, "\n\n");
  }
  fs.writeFileSync(file, out.replace(/\n*$/, "\n"));
  return file;
}
