"use client";
// The fleet's filters (issue 13): search, state, health, label conditions (`tier=web, zone=a`, as the
// label editor writes labels), role and drift. Kept in the URL by the view; an invalid one is marked
// invalid with its reason, and the list says so instead of ignoring it.
import { stateLabel } from "../state-badge";
import { HEALTHS } from "../health-badge";
import { NODE_STATES } from "@mesh/protocol";
import { paramsFromView, type FleetView } from "./fleet-url";

const inputClass = "rounded-md border bg-white px-2.5 py-1.5 text-sm";
const valid = "border-slate-300";
const invalid = "border-rose-600 ring-1 ring-rose-600";

export function FleetFilterBar({
  view,
  errors,
  onChange,
}: {
  view: FleetView;
  errors: Partial<Record<"state" | "health" | "labels", string>>;
  onChange: (patch: Partial<FleetView>) => void;
}) {
  // Every change of filter goes back to the first page.
  const set = (patch: Partial<FleetView>) => onChange({ ...patch, page: 0 });
  const exportHref = `/api/nodes/export?${paramsFromView({ ...view, page: 0 }).toString()}`;
  const anyError = Object.keys(errors).length > 0;
  return (
    <form role="search" aria-label="Filter nodes" className="flex flex-wrap items-end gap-2" onSubmit={(e) => e.preventDefault()}>
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
        Search
        <input type="search" value={view.q} onChange={(e) => set({ q: e.target.value })} placeholder="name or hostname" className={`${inputClass} ${valid}`} />
      </label>
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
        State
        <select
          value={view.state}
          onChange={(e) => set({ state: e.target.value })}
          aria-invalid={!!errors.state}
          className={`${inputClass} ${errors.state ? invalid : valid}`}
        >
          <option value="">any</option>
          {NODE_STATES.map((s) => (
            <option key={s} value={s}>
              {stateLabel(s)}
            </option>
          ))}
          {errors.state && <option value={view.state}>{view.state} (invalid)</option>}
        </select>
      </label>
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
        Health
        <select
          data-testid="health-filter"
          value={view.health}
          onChange={(e) => set({ health: e.target.value })}
          aria-invalid={!!errors.health}
          className={`${inputClass} ${errors.health ? invalid : valid}`}
        >
          <option value="">any</option>
          {HEALTHS.map((h) => (
            <option key={h} value={h}>
              {h}
            </option>
          ))}
          {errors.health && <option value={view.health}>{view.health} (invalid)</option>}
        </select>
      </label>
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
        Labels
        <input
          data-testid="labels-filter"
          value={view.labels}
          onChange={(e) => set({ labels: e.target.value })}
          placeholder="tier=web, zone=a"
          aria-invalid={!!errors.labels}
          aria-describedby={errors.labels ? "labels-filter-error" : undefined}
          className={`${inputClass} ${errors.labels ? invalid : valid}`}
        />
      </label>
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
        Role
        <input value={view.role} onChange={(e) => set({ role: e.target.value })} placeholder="web" className={`${inputClass} ${valid}`} />
      </label>
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
        Drift
        <select value={view.drift} onChange={(e) => set({ drift: e.target.value as FleetView["drift"] })} className={`${inputClass} ${valid}`}>
          <option value="">any</option>
          <option value="yes">drifting</option>
          <option value="no">no drift</option>
        </select>
      </label>
      {anyError ? (
        <span className="px-1 py-1.5 text-sm text-slate-600">Export CSV (fix the filter first)</span>
      ) : (
        <a
          data-testid="export-csv"
          href={exportHref}
          className="rounded-md border border-slate-300 bg-white px-3 py-1.5 text-sm font-medium text-slate-900 hover:border-slate-500"
        >
          Export CSV
        </a>
      )}
      {errors.labels && (
        <p id="labels-filter-error" role="alert" data-testid="labels-filter-error" className="basis-full text-sm text-rose-800">
          Labels filter is invalid: {errors.labels}
        </p>
      )}
    </form>
  );
}
