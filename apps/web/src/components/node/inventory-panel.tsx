"use client";
// What the machine has (packages, units, ports, mounts), searchable, shown a
// bounded number of rows at a time.
import { useState } from "react";
import type { Inventory } from "@mesh/protocol";

const SHOWN = 100;

export function InventoryPanel({ inventory }: { inventory: Inventory }) {
  const [q, setQ] = useState("");
  const needle = q.trim().toLowerCase();
  const rows = [
    ...(inventory.packages ?? []).map((p) => ({ kind: "package", name: p.name, detail: p.version })),
    ...(inventory.units ?? []).map((u) => ({ kind: "unit", name: u.name, detail: u.state })),
    ...(inventory.ports ?? []).map((p) => ({ kind: "port", name: `${p.port}/${p.proto}`, detail: "" })),
    ...(inventory.mounts ?? []).map((m) => ({ kind: "mount", name: m.target, detail: `${m.source} (${m.fstype})` })),
  ];
  const matched = needle ? rows.filter((r) => `${r.kind} ${r.name} ${r.detail}`.toLowerCase().includes(needle)) : rows;
  return (
    <div className="space-y-2 text-sm">
      <p className="text-slate-700">
        {inventory.packages?.length ?? 0} packages · {inventory.units?.length ?? 0} units · {inventory.ports?.length ?? 0} ports ·{" "}
        {inventory.mounts?.length ?? 0} mounts
        {inventory.truncated ? " (truncated by the host)" : ""}
      </p>
      <label className="block text-xs font-medium text-slate-700">
        Search the inventory
        <input
          type="search"
          value={q}
          onChange={(e) => setQ(e.target.value)}
          placeholder="openssh, 22/tcp, /var"
          className="mt-1 block w-full rounded-md border border-slate-300 px-2.5 py-1.5 text-sm"
        />
      </label>
      {matched.length === 0 ? (
        <p className="text-slate-600">{rows.length === 0 ? "The host reported an empty inventory." : "Nothing matches."}</p>
      ) : (
        <ul className="max-h-64 divide-y divide-slate-100 overflow-y-auto rounded border border-slate-100" tabIndex={0} aria-label="Inventory items">
          {matched.slice(0, SHOWN).map((r, i) => (
            <li key={i} className="flex justify-between gap-2 px-2 py-1">
              <span className="font-mono">
                <span className="text-slate-600">{r.kind}</span> {r.name}
              </span>
              <span className="truncate text-slate-600">{r.detail}</span>
            </li>
          ))}
        </ul>
      )}
      {matched.length > SHOWN && (
        <p className="text-xs text-slate-600">
          Showing {SHOWN} of {matched.length}; search to narrow.
        </p>
      )}
    </div>
  );
}
