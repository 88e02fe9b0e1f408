// Labels as key=value chips.
export function LabelChips({ labels }: { labels: Record<string, string> }) {
  const entries = Object.entries(labels);
  if (entries.length === 0) return <span className="text-slate-500">none</span>;
  return (
    <ul className="flex flex-wrap gap-1">
      {entries.map(([k, v]) => (
        <li key={k} className="rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-700">
          {k}={v}
        </li>
      ))}
    </ul>
  );
}
