// A small line diff of a file's content, as the plan gives it (plan-changes.ts): removed
// lines red, added green, hunk heads grey.
export interface ContentDiffData {
  lines: string[];
  omitted: number;
}

const STYLE: Record<string, string> = { "+": "bg-emerald-50 text-emerald-900", "-": "bg-rose-50 text-rose-900", "@": "text-slate-500" };

export function ContentDiffView({ diff }: { diff: ContentDiffData }) {
  return (
    <details className="w-full">
      <summary className="cursor-pointer font-sans text-slate-700">content diff</summary>
      <pre data-testid="content-diff" tabIndex={0} className="mt-1 max-h-64 overflow-auto rounded border border-slate-200 text-xs">
        {diff.lines.map((l, i) => (
          <div key={i} className={STYLE[l[0] ?? ""] ?? ""}>
            {l || " "}
          </div>
        ))}
        {diff.omitted > 0 && <div className="text-slate-500">… {diff.omitted} more lines</div>}
      </pre>
    </details>
  );
}
