// The machine's profile as the host sent it; sizes in human units, the exact bytes in the title.
import { formatBytes } from "../format-bytes";
import { hostInstallMeaning } from "./host-install";

/** `memoryBytes` reads "memory 15.6 GiB": the facts whose name says they count bytes. */
const BYTES = /^(.+)Bytes$/;

export function ProfileList({ profile }: { profile: Record<string, unknown> }) {
  // Said also when missing: an older host sends no hostInstall, and no upgrade role matches it.
  const entries = Object.entries(profile);
  if (!("hostInstall" in profile)) entries.push(["hostInstall", undefined]);
  return (
    <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1 text-sm" data-testid="profile">
      {entries.map(([k, v]) => {
        const bytes = BYTES.exec(k);
        return (
          <div key={k} className="contents">
            <dt className="text-slate-600">{bytes && typeof v === "number" ? bytes[1] : k}</dt>
            {bytes && typeof v === "number" ? (
              <dd className="font-mono" title={`${v.toLocaleString("en-GB")} bytes`}>
                {formatBytes(v)}
              </dd>
            ) : k === "hostInstall" ? (
              <dd data-testid="host-install">
                {v === undefined ? null : <span className="font-mono">{String(v)}</span>}
                <span className="text-slate-600">
                  {v === undefined ? "" : ": "}
                  {hostInstallMeaning(v)}
                </span>
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
