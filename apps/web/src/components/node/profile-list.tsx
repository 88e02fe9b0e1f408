// The machine's profile as the host sent it; sizes in human units, the exact bytes in the title.
import { formatBytes } from "../format-bytes";

/** `memoryBytes` reads "memory 15.6 GiB": the facts whose name says they count bytes. */
const BYTES = /^(.+)Bytes$/;

export function ProfileList({ profile }: { profile: Record<string, unknown> }) {
  return (
    <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm" data-testid="profile">
      {Object.entries(profile).map(([k, v]) => {
        const bytes = BYTES.exec(k);
        return (
          <div key={k} className="contents">
            <dt className="text-slate-600">{bytes && typeof v === "number" ? bytes[1] : k}</dt>
            {bytes && typeof v === "number" ? (
              <dd className="font-mono" title={`${v.toLocaleString("en-GB")} bytes`}>
                {formatBytes(v)}
              </dd>
            ) : (
              <dd className="break-all font-mono">{String(v)}</dd>
            )}
          </div>
        );
      })}
    </dl>
  );
}
