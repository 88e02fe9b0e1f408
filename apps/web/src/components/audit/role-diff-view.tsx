// A role change as role.upsert's audit event records it (packages/api services/role-diff.ts): the
// selector and revoke policy before and after, resources and grants added, removed and changed (with
// the fields that changed), and a changed file's content as a line diff (admins only; viewers see that
// it changed). Rendered in the audit row's expansion.
import { ContentDiffView, type ContentDiffData } from "../content-diff";

interface Brief {
  id: string;
  type: string;
  subject: string;
}
interface Changed extends Brief {
  fields: string[];
  content?: ContentDiffData;
  contentHidden?: true;
}
interface Listed<T> {
  items: T[];
  more: number;
}
export interface RoleDiffData {
  created?: true;
  selector?: { before: unknown; after: unknown };
  revokeOfflineAfter?: { before: number | null; after: number | null };
  resources: { added: Listed<Brief>; removed: Listed<Brief>; changed: Listed<Changed> };
  grants?: { added: string[]; removed: string[]; changed: string[] };
  truncated?: true;
}

/** The diff an event's data carries, or null when it has none (events written before diffs were kept). */
export function roleDiffOf(action: string, data: unknown): RoleDiffData | null {
  if (action !== "role.upsert" || !data || typeof data !== "object") return null;
  const diff = (data as { diff?: RoleDiffData }).diff;
  return diff?.resources ? diff : null;
}

const limit = (m: number | null) => (m === null ? "off" : m % 1440 === 0 ? `${m / 1440}d` : m % 60 === 0 ? `${m / 60}h` : `${m} min`);
const more = (n: number) => (n > 0 ? <li className="text-slate-500">… and {n} more</li> : null);

function Resources({ title, list, sign }: { title: string; list: Listed<Brief>; sign: string }) {
  if (list.items.length === 0) return null;
  return (
    <section>
      <h3 className="font-semibold">{title}</h3>
      <ul className="font-mono">
        {list.items.map((r) => (
          <li key={r.id}>
            {sign} {r.id} ({r.type} {r.subject})
          </li>
        ))}
        {more(list.more)}
      </ul>
    </section>
  );
}

export function RoleDiffView({ diff }: { diff: RoleDiffData }) {
  const { added, removed, changed } = diff.resources;
  const nothing =
    !diff.created && !diff.selector && !diff.revokeOfflineAfter && !diff.grants && !added.items.length && !removed.items.length && !changed.items.length;
  return (
    <div data-testid="role-diff" className="space-y-2 text-xs">
      {diff.created ? <p className="font-medium">New role.</p> : null}
      {nothing ? <p className="text-slate-700">Saved unchanged.</p> : null}
      {diff.selector ? (
        <section>
          <h3 className="font-semibold">Selector</h3>
          <pre className="overflow-auto rounded bg-rose-50 px-2 py-1 text-rose-900">- {JSON.stringify(diff.selector.before)}</pre>
          <pre className="overflow-auto rounded bg-emerald-50 px-2 py-1 text-emerald-900">+ {JSON.stringify(diff.selector.after)}</pre>
        </section>
      ) : null}
      {diff.revokeOfflineAfter ? (
        <p>
          <span className="font-semibold">Revoke when offline:</span> {limit(diff.revokeOfflineAfter.before)} → {limit(diff.revokeOfflineAfter.after)}
        </p>
      ) : null}
      <Resources title="Resources added" list={added} sign="+" />
      <Resources title="Resources removed" list={removed} sign="-" />
      {changed.items.length > 0 ? (
        <section>
          <h3 className="font-semibold">Resources changed</h3>
          <ul className="space-y-1">
            {changed.items.map((r) => (
              <li key={r.id}>
                <span className="font-mono">
                  ~ {r.id} ({r.type} {r.subject})
                </span>
                : {r.fields.join(", ")}
                {r.content ? <ContentDiffView diff={r.content} /> : null}
                {r.contentHidden ? <span className="text-slate-600"> (content shown to admins only)</span> : null}
              </li>
            ))}
            {more(changed.more)}
          </ul>
        </section>
      ) : null}
      {diff.grants ? (
        <p>
          <span className="font-semibold">Grants:</span>{" "}
          {[...diff.grants.added.map((g) => `+${g}`), ...diff.grants.removed.map((g) => `-${g}`), ...diff.grants.changed.map((g) => `~${g}`)].join(" ")}
        </p>
      ) : null}
      {diff.truncated ? <p className="text-slate-600">Truncated: the event keeps a bounded diff.</p> : null}
    </div>
  );
}
