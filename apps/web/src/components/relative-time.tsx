// A time shown relative ("3 min ago"), with the absolute time on hover.
export function RelativeTime({ at, now = new Date() }: { at: Date | string | null; now?: Date }) {
  if (!at) return <span className="text-slate-400">never</span>;
  const date = new Date(at);
  const s = Math.round((now.getTime() - date.getTime()) / 1000);
  const text =
    s < 5 ? "just now" : s < 60 ? `${s} s ago` : s < 3600 ? `${Math.floor(s / 60)} min ago` : s < 86400 ? `${Math.floor(s / 3600)} h ago` : `${Math.floor(s / 86400)} d ago`;
  return (
    <time dateTime={date.toISOString()} title={date.toISOString()}>
      {text}
    </time>
  );
}
