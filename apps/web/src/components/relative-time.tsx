// A time shown relative ("3 min ago"), with the absolute time on hover.
// The server's and the browser's clocks differ by a render: the text may too.
export function RelativeTime({ at, now = new Date() }: { at: Date | string | null; now?: Date }) {
  if (!at) return <span className="text-slate-500">never</span>;
  const date = new Date(at);
  const diff = Math.round((now.getTime() - date.getTime()) / 1000);
  const s = Math.abs(diff);
  const span = s < 60 ? `${s} s` : s < 3600 ? `${Math.floor(s / 60)} min` : s < 86400 ? `${Math.floor(s / 3600)} h` : `${Math.floor(s / 86400)} d`;
  const text = s < 5 ? "just now" : diff > 0 ? `${span} ago` : `in ${span}`;
  return (
    <time dateTime={date.toISOString()} title={date.toLocaleString("en-GB", { timeZoneName: "short" })} suppressHydrationWarning>
      {text}
    </time>
  );
}
