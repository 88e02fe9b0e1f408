"use client";
// The role editor: name, selector and resources as JSON, checked as you type
// with errors at the field (once the field has been typed in, or a save tried); a live plan
// of what saving would do; then save. The JSON stays as the author typed it. A save that
// would put nodes into conflict is refused, naming the conflict, with a button to confirm.
import { useRouter } from "next/navigation";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useDeferredValue, useEffect, useMemo, useState } from "react";
import { useTRPC, useTRPCClient } from "../trpc";
import { Button } from "../button";
import { ErrorState, LoadingState } from "../states";
import { errorMessage } from "../error-message";
import { checkDraft, type Field } from "./role-draft";
import { RolePlan } from "./role-plan";
import { RoleHelp } from "./role-help";
import { ConflictRefusal, conflictsOf } from "../conflict-refusal";
import { RolloutChooser } from "./rollout-chooser";
import { choiceOf, policyOf } from "./rollout-choice";

const EXAMPLE_RESOURCES = [
  { type: "directory", id: "site-dir", path: "/srv/site", mode: "0755" },
  { type: "file", id: "index", path: "/srv/site/index.html", content: "<h1>hello</h1>\n", mode: "0644" },
];

export interface RoleDraftInput {
  name: string;
  selector: unknown;
  resources: unknown;
  grants?: unknown;
  /** Minutes, or null when the role has no revoke-when-offline policy. */
  revokeOfflineAfter?: number | null;
}

/** A stored limit in the unit an operator would type: "30d", "12h", else minutes. */
function limitText(minutes: number | null | undefined): string {
  if (!minutes) return "";
  if (minutes % 1440 === 0) return `${minutes / 1440}d`;
  if (minutes % 60 === 0) return `${minutes / 60}h`;
  return String(minutes);
}

/** `storedRollout`: the role's default rollout policy (null: none, the recommended one is proposed). */
export function RoleEditor({ initial, storedRollout = null }: { initial: RoleDraftInput | null; storedRollout?: unknown }) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const router = useRouter();
  const [name, setName] = useState(initial?.name ?? "");
  const [selectorText, setSelectorText] = useState(JSON.stringify(initial?.selector ?? { labels: {} }, null, 2));
  const [resourcesText, setResourcesText] = useState(JSON.stringify(initial?.resources ?? EXAMPLE_RESOURCES, null, 2));
  // Why: kept with the version this save makes (optional).
  const [message, setMessage] = useState("");
  const [revokeOfflineText, setRevokeOfflineText] = useState(limitText(initial?.revokeOfflineAfter));
  const [rolloutChoice, setRolloutChoice] = useState(() => choiceOf(storedRollout));
  const rollout = policyOf(rolloutChoice);
  // Marks the form interactive once hydrated: typing before that would be lost.
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(true), []);
  // Errors wait for the user: a field shows its errors once typed in, or after a save was tried.
  const [touched, setTouched] = useState<Partial<Record<Field, boolean>>>({});
  const [triedSave, setTriedSave] = useState(false);
  const shows = (f: Field) => triedSave || !!touched[f];
  const draft = useMemo(
    () => checkDraft(name, selectorText, resourcesText, initial?.grants ?? [], revokeOfflineText),
    [name, selectorText, resourcesText, revokeOfflineText, initial],
  );
  const planned = useDeferredValue(draft.role);
  const plan = useQuery({
    queryKey: ["role-plan", planned],
    queryFn: () => client.role.plan.mutate(planned!),
    enabled: !!planned,
    staleTime: 5000,
    placeholderData: (prev) => prev,
  });
  const save = useMutation(
    trpc.role.upsert.mutationOptions({
      onSuccess: (saved) => {
        void queryClient.invalidateQueries({ queryKey: trpc.role.list.queryKey() });
        void queryClient.invalidateQueries({ queryKey: trpc.rollout.pathKey() });
        // A rollout with waves after the canary is watched on the role's page; one that is only its
        // canary (every node it reaches at once) is settled like an all-at-once save.
        router.push(saved.rollout && saved.rollout.plan.waves.length > 1 ? `/roles/edit?name=${encodeURIComponent(saved.role.name)}#rollouts` : "/roles");
      },
    }),
  );

  // A refusal answers the role as it was sent: an edit since then clears it.
  const { reset } = save;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the edited fields are the trigger, not inputs of the effect
  useEffect(() => reset(), [name, selectorText, resourcesText, revokeOfflineText, reset]);
  const refusal = save.isError ? conflictsOf(save.error) : null;
  const hasError = (f: Field) => shows(f) && !!draft.errors?.[f]?.length;
  const fieldError = (f: Field) =>
    hasError(f) ? (
      <ul id={`${f}-errors`} data-testid={`${f}-errors`} className="mt-1 list-disc pl-5 text-sm text-rose-700">
        {draft.errors![f]!.map((e, i) => (
          <li key={i}>{e}</li>
        ))}
      </ul>
    ) : null;
  const withMessage = <T extends object>(role: T) => ({
    ...role,
    ...(message.trim() ? { message: message.trim() } : {}),
    ...(rollout.policy ? { rollout: rollout.policy, ...(rolloutChoice.makeDefault ? { rolloutPolicy: rollout.policy } : {}) } : {}),
  });
  const box = (f: Field) => `mt-1 block w-full rounded-md border px-2.5 py-1.5 font-mono text-sm ${hasError(f) ? "border-rose-400" : "border-slate-300"}`;

  return (
    <div className="grid gap-4 lg:grid-cols-2">
      <form
        data-testid="role-form"
        data-ready={ready}
        className="space-y-4 rounded-lg border border-slate-200 bg-white p-4"
        onSubmit={(e) => {
          e.preventDefault();
          setTriedSave(true);
          if (draft.asWritten) save.mutate(withMessage(draft.asWritten));
        }}
      >
        <label className="block text-sm font-medium">
          Name
          <input
            value={name}
            onChange={(e) => (setName(e.target.value), setTouched((t) => ({ ...t, name: true })))}
            readOnly={!!initial}
            aria-invalid={hasError("name")}
            aria-describedby="name-errors"
            placeholder="web"
            className={box("name")}
          />
        </label>
        {fieldError("name")}
        <label className="block text-sm font-medium">
          Selector (JSON: labels and profile conditions; {"{}"} matches every node)
          <textarea
            value={selectorText}
            onChange={(e) => (setSelectorText(e.target.value), setTouched((t) => ({ ...t, selector: true })))}
            rows={5}
            spellCheck={false}
            aria-invalid={hasError("selector")}
            aria-describedby="selector-errors"
            className={box("selector")}
          />
        </label>
        {fieldError("selector")}
        <label className="block text-sm font-medium">
          Resources (JSON array)
          <textarea
            value={resourcesText}
            onChange={(e) => (setResourcesText(e.target.value), setTouched((t) => ({ ...t, resources: true })))}
            rows={14}
            spellCheck={false}
            aria-invalid={hasError("resources")}
            aria-describedby="resources-errors"
            className={box("resources")}
          />
        </label>
        {fieldError("resources")}
        <label className="block text-sm font-medium">
          Revoke nodes offline longer than (optional)
          <input
            value={revokeOfflineText}
            onChange={(e) => (setRevokeOfflineText(e.target.value), setTouched((t) => ({ ...t, revokeOfflineAfter: true })))}
            aria-invalid={hasError("revokeOfflineAfter")}
            aria-describedby="revokeOfflineAfter-help revokeOfflineAfter-errors"
            placeholder="off"
            className={box("revokeOfflineAfter")}
          />
        </label>
        <p id="revokeOfflineAfter-help" className="text-sm text-slate-700">
          Empty: never (the default). Minutes, or a duration such as 90m, 12h or 30d (5 minutes to 365 days). A node of this role disconnected longer than this
          is revoked: its key is refused and its grants revoked, and the audit trail records it. Nothing happens to the machine itself: the mesh cannot switch
          it off, and it keeps running what it last had.
        </p>
        {fieldError("revokeOfflineAfter")}
        <RoleHelp />
        <label className="block text-sm font-medium">
          Message (optional: why, kept with the new version)
          <input
            value={message}
            onChange={(e) => setMessage(e.target.value)}
            maxLength={500}
            placeholder="e.g. raise the worker count"
            className="mt-1 block w-full rounded-md border border-slate-300 px-2.5 py-1.5 text-sm"
          />
        </label>
        <RolloutChooser value={rolloutChoice} onChange={setRolloutChoice} hasStored={storedRollout != null} />
        {refusal && draft.asWritten && (
          <ConflictRefusal
            refusal={refusal}
            pending={save.isPending}
            onConfirm={() => save.mutate({ ...withMessage(draft.asWritten!), confirmConflicts: true })}
          />
        )}
        {save.isError && !refusal && (
          <p role="alert" className="text-sm text-rose-700">
            Not saved: {errorMessage(save.error)}
          </p>
        )}
        <div className="flex gap-2">
          <Button type="submit" kind="primary" disabled={!draft.role || save.isPending || !plan.data || !rollout.policy}>
            {save.isPending ? "Saving…" : "Save and push"}
          </Button>
          <Button onClick={() => router.push("/roles")}>Cancel</Button>
        </div>
      </form>
      <section aria-label="Plan" className="rounded-lg border border-slate-200 bg-white p-4">
        <h2 className="mb-3 text-sm font-semibold uppercase tracking-wide text-slate-600">Plan</h2>
        {!draft.role ? (
          <p className="text-sm text-slate-700">
            {Object.keys(draft.errors ?? {}).some((f) => shows(f as Field))
              ? "Fix the errors on the left to see the plan."
              : "Fill in the role on the left to see the plan."}
          </p>
        ) : plan.isError ? (
          <ErrorState error={plan.error} title="Could not plan this role" />
        ) : !plan.data ? (
          <LoadingState label="Planning…" />
        ) : (
          <RolePlan plan={plan.data} allAtOnce={rolloutChoice.mode === "all-at-once"} />
        )}
      </section>
    </div>
  );
}
