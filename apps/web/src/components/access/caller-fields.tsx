// What users and named API keys share on the Access page: the role picker of the
// create form, and the Created and Status cells of a row.
import { RelativeTime } from "../relative-time";

export type CallerRole = "admin" | "viewer";

export const fieldClass = "rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm";

export function RoleField({ value, onChange }: { value: CallerRole; onChange: (role: CallerRole) => void }) {
  return (
    <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
      Role
      <select value={value} onChange={(e) => onChange(e.target.value as CallerRole)} className={fieldClass}>
        <option value="viewer">viewer</option>
        <option value="admin">admin</option>
      </select>
    </label>
  );
}

export function CallerStatusCells({ createdAt, createdBy, revokedAt }: { createdAt: Date | string; createdBy: string; revokedAt: Date | string | null }) {
  return (
    <>
      <td className="px-2 py-1 text-slate-700">
        <RelativeTime at={createdAt} /> by {createdBy}
      </td>
      <td className="px-2 py-1">{revokedAt ? <span className="text-rose-700">revoked</span> : "active"}</td>
    </>
  );
}
