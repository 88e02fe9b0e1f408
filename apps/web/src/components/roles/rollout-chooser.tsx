"use client";
// How this save reaches the fleet (issue 14): staged (a canary, then waves, halting itself on
// failures) with the role's stored policy or the recommended one preselected, editable; or all at
// once. "Make this the role's default" stores it for later saves (and for automation).
import { useState } from "react";
import type { RolloutChoice } from "./rollout-choice";
import { policyInWords, policyOf } from "./rollout-choice";

const input = "mt-1 block w-full rounded-md border border-slate-300 px-2 py-1 text-sm";

export function RolloutChooser({ value, onChange, hasStored }: { value: RolloutChoice; onChange: (c: RolloutChoice) => void; hasStored: boolean }) {
  const set = (patch: Partial<RolloutChoice>) => onChange({ ...value, ...patch });
  const checked = policyOf(value);
  const [editing, setEditing] = useState(false);
  return (
    <fieldset data-testid="rollout-chooser" className="space-y-2 rounded-md border border-slate-200 p-3 text-sm">
      <legend className="px-1 font-medium">Rollout of this save</legend>
      <label className="flex items-start gap-2">
        <input type="radio" name="rollout-mode" checked={value.mode === "staged"} onChange={() => set({ mode: "staged" })} className="mt-1" />
        <span>
          Staged: <span data-testid="rollout-words">{value.mode === "staged" && checked.policy ? policyInWords(checked.policy) : "a canary, then waves"}</span>
          <span className="block text-xs text-slate-700">{hasStored ? "The role's default policy." : "Recommended: this role has no default policy yet."}</span>
        </span>
      </label>
      <label className="flex items-start gap-2">
        <input type="radio" name="rollout-mode" checked={value.mode === "all-at-once"} onChange={() => set({ mode: "all-at-once" })} className="mt-1" />
        <span>All at once: every matching node gets the change now</span>
      </label>
      {value.mode === "staged" && (
        <>
          <button type="button" aria-expanded={editing} onClick={() => setEditing((e) => !e)} className="text-sm text-sky-800 underline">
            {editing ? "Hide the rollout settings" : "Change the rollout settings"}
          </button>
          {editing && (
            <div className="grid gap-2 sm:grid-cols-2">
              <label className="block">
                Canary by
                <select
                  value={value.canaryKind}
                  onChange={(e) =>
                    set({ canaryKind: e.target.value as RolloutChoice["canaryKind"], canary: e.target.value === "selector" ? '{"labels":{}}' : "1" })
                  }
                  className={input}
                >
                  <option value="count">number of nodes</option>
                  <option value="percent">percent of the nodes</option>
                  <option value="selector">label selector (JSON)</option>
                </select>
              </label>
              <label className="block">
                Canary {value.canaryKind === "count" ? "nodes" : value.canaryKind === "percent" ? "%" : "selector"}
                <input
                  value={value.canary}
                  onChange={(e) => set({ canary: e.target.value })}
                  inputMode={value.canaryKind === "selector" ? undefined : "decimal"}
                  className={`${input} ${value.canaryKind === "selector" ? "font-mono" : ""}`}
                />
              </label>
              <label className="block">
                Later waves by
                <select value={value.wavesKind} onChange={(e) => set({ wavesKind: e.target.value as RolloutChoice["wavesKind"] })} className={input}>
                  <option value="size">number of nodes</option>
                  <option value="percent">percent of the nodes</option>
                </select>
              </label>
              <label className="block">
                Wave {value.wavesKind === "size" ? "nodes" : "%"}
                <input value={value.waves} onChange={(e) => set({ waves: e.target.value })} inputMode="decimal" className={input} />
              </label>
              <label className="block">
                Halt at failures (%)
                <input
                  value={value.haltAtFailurePercent}
                  onChange={(e) => set({ haltAtFailurePercent: e.target.value })}
                  inputMode="decimal"
                  className={input}
                />
              </label>
              <label className="block">
                Soak between waves (seconds)
                <input value={value.soakSeconds} onChange={(e) => set({ soakSeconds: e.target.value })} inputMode="numeric" className={input} />
              </label>
              <label className="block">
                Wave timeout (seconds)
                <input value={value.waveTimeoutSeconds} onChange={(e) => set({ waveTimeoutSeconds: e.target.value })} inputMode="numeric" className={input} />
              </label>
              <p className="text-xs text-slate-700 sm:col-span-2">
                Any canary failure halts the rollout; a later wave halts it when its failed or timed-out share passes the limit.
              </p>
            </div>
          )}
        </>
      )}
      {checked.error && (
        <p role="alert" data-testid="rollout-errors" className="text-rose-700">
          {checked.error}
        </p>
      )}
      <label className="flex items-center gap-2">
        <input type="checkbox" checked={value.makeDefault} onChange={(e) => set({ makeDefault: e.target.checked })} />
        Make this the role&apos;s default
      </label>
    </fieldset>
  );
}
