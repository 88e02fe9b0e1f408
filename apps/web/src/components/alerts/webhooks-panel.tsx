"use client";
// Webhooks: create (the secret is shown once), send a test, enable or disable, delete, and each one's delivery log.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { CopyButton } from "../copy-button";
import { EmptyState, ErrorState, LoadingState } from "../states";
import { errorMessage } from "../error-message";
import { fieldClass } from "../access/caller-fields";
import { DeliveryLog } from "./delivery-log";

const EVENTS = [
  { id: "offline", label: "Offline longer than N minutes" },
  { id: "failing", label: "Failing (a report with errors)" },
  { id: "drifted", label: "Drifted" },
  { id: "conflicted", label: "Conflicted" },
  { id: "revoked", label: "Revoked" },
  { id: "enrolled", label: "Enrolled" },
  { id: "rollout-halted", label: "Rollout halted (a staged rollout stopped itself)" },
] as const;
type EventId = (typeof EVENTS)[number]["id"];

export function WebhooksPanel() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const hooks = useQuery(trpc.alert.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.alert.list.queryKey() });
  const [name, setName] = useState("");
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<EventId[]>(["offline", "failing"]);
  const [minutes, setMinutes] = useState("10");
  const [shown, setShown] = useState<{ name: string; secret: string } | null>(null);
  const create = useMutation(
    trpc.alert.create.mutationOptions({ onSuccess: (w) => (setShown({ name: w.name, secret: w.secret }), setName(""), setUrl(""), refresh()) }),
  );
  const remove = useMutation(trpc.alert.delete.mutationOptions({ onSettled: refresh }));
  const toggle = useMutation(trpc.alert.setEnabled.mutationOptions({ onSettled: refresh }));
  const test = useMutation(trpc.alert.test.mutationOptions());
  const flip = (id: EventId) => setEvents((e) => (e.includes(id) ? e.filter((x) => x !== id) : [...e, id]));
  const submit = () => create.mutate({ name, url, events, ...(events.includes("offline") ? { offlineMinutes: Number(minutes) } : {}) });
  const error = create.error ?? remove.error ?? toggle.error ?? test.error;
  return (
    <div className="space-y-4">
      <form className="space-y-3" onSubmit={(e) => (e.preventDefault(), submit())}>
        <div className="flex flex-wrap items-end gap-2">
          <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
            Name
            <input
              value={name}
              onChange={(e) => setName(e.target.value)}
              required
              maxLength={64}
              placeholder="on-call"
              autoComplete="off"
              className={fieldClass}
            />
          </label>
          <label className="flex min-w-64 flex-1 flex-col gap-1 text-xs font-medium text-slate-700">
            URL
            <input
              type="url"
              value={url}
              onChange={(e) => setUrl(e.target.value)}
              required
              maxLength={2048}
              placeholder="https://hooks.example.com/mesh"
              autoComplete="off"
              className={fieldClass}
            />
          </label>
        </div>
        <fieldset className="flex flex-wrap gap-x-4 gap-y-1 text-sm">
          <legend className="mb-1 text-xs font-medium text-slate-700">Events</legend>
          {EVENTS.map((e) => (
            <label key={e.id} className="flex items-center gap-1.5">
              <input type="checkbox" checked={events.includes(e.id)} onChange={() => flip(e.id)} />
              {e.label}
            </label>
          ))}
        </fieldset>
        {events.includes("offline") && (
          <label className="flex w-48 flex-col gap-1 text-xs font-medium text-slate-700">
            Offline for (minutes)
            <input type="number" min={1} max={43200} value={minutes} onChange={(e) => setMinutes(e.target.value)} required className={fieldClass} />
          </label>
        )}
        <Button type="submit" kind="primary" disabled={create.isPending}>
          Add webhook
        </Button>
      </form>
      {error && (
        <p role="alert" className="text-sm text-rose-700">
          {errorMessage(error)}
        </p>
      )}
      {shown && (
        <div aria-live="polite" className="space-y-2 rounded-md border border-emerald-200 bg-emerald-50 p-3 text-sm">
          <p>
            Webhook <strong>{shown.name}</strong> added. Its signing secret is shown only now: copy it to the receiver.
          </p>
          <div className="flex items-start gap-2">
            <code data-testid="webhook-secret" className="block flex-1 break-all rounded bg-slate-900 px-3 py-2 font-mono text-emerald-300">
              {shown.secret}
            </code>
            <CopyButton text={shown.secret} label="Copy the webhook secret" />
          </div>
        </div>
      )}
      {hooks.isPending ? (
        <LoadingState />
      ) : hooks.isError ? (
        <ErrorState error={hooks.error} />
      ) : hooks.data.items.length === 0 ? (
        <EmptyState>No webhooks yet.</EmptyState>
      ) : (
        <ul className="space-y-3">
          {hooks.data.items.map((h) => (
            <li key={h.id} data-testid="webhook" className="rounded-md border border-slate-200 p-3">
              <div className="flex flex-wrap items-center justify-between gap-2">
                <div className="min-w-0">
                  <p className="font-medium">
                    {h.name} {!h.enabled && <span className="text-xs text-slate-600">(disabled)</span>}
                  </p>
                  <p className="truncate font-mono text-xs text-slate-600">{h.url}</p>
                  <p className="text-xs text-slate-700">{h.events.map((e) => (e === "offline" ? `offline > ${h.offlineMinutes} min` : e)).join(", ")}</p>
                </div>
                <div className="space-x-2 whitespace-nowrap">
                  <Button aria-label={`Send test to webhook ${h.name}`} disabled={test.isPending} onClick={() => test.mutate({ id: h.id })}>
                    Send test
                  </Button>
                  <Button aria-label={`${h.enabled ? "Disable" : "Enable"} webhook ${h.name}`} onClick={() => toggle.mutate({ id: h.id, enabled: !h.enabled })}>
                    {h.enabled ? "Disable" : "Enable"}
                  </Button>
                  <Button kind="danger" aria-label={`Delete webhook ${h.name}`} onClick={() => remove.mutate({ id: h.id })}>
                    Delete
                  </Button>
                </div>
              </div>
              <DeliveryLog id={h.id} name={h.name} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
