"use client";
// Named API keys for automation: create and rotate (the key is shown once) and revoke.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { CopyButton } from "../copy-button";
import { ColumnHeads } from "../column-heads";
import { EmptyState, ErrorState, LoadingState } from "../states";
import { errorMessage } from "../error-message";
import { CallerStatusCells, fieldClass, RoleField, type CallerRole } from "./caller-fields";

export function ApiKeysPanel() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const keys = useQuery(trpc.apiKey.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.apiKey.list.queryKey() });
  // The last key shown: a new one, or a rotated one (the old secret stopped working).
  const [shown, setShown] = useState<{ name: string; role: string; key: string; verb: string } | null>(null);
  const create = useMutation(trpc.apiKey.create.mutationOptions({ onSuccess: (k) => (setName(""), setShown({ ...k, verb: "created" }), refresh()) }));
  const revoke = useMutation(trpc.apiKey.revoke.mutationOptions({ onSettled: refresh }));
  const rotate = useMutation(trpc.apiKey.rotate.mutationOptions({ onSuccess: (k) => setShown({ ...k, verb: "rotated: the old key no longer works" }) }));
  const [name, setName] = useState("");
  const [role, setRole] = useState<CallerRole>("viewer");
  return (
    <div className="space-y-4">
      <form className="flex flex-wrap items-end gap-2" onSubmit={(e) => (e.preventDefault(), create.mutate({ name, role }))}>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Key name
          <input value={name} onChange={(e) => setName(e.target.value)} required placeholder="ci-deploy" autoComplete="off" className={fieldClass} />
        </label>
        <RoleField value={role} onChange={setRole} />
        <Button type="submit" kind="primary" disabled={create.isPending}>
          Create API key
        </Button>
      </form>
      {create.isError && (
        <p role="alert" className="text-sm text-rose-700">
          {errorMessage(create.error)}
        </p>
      )}
      {revoke.isError && (
        <p role="alert" className="text-sm text-rose-700">
          {errorMessage(revoke.error)}
        </p>
      )}
      {rotate.isError && (
        <p role="alert" className="text-sm text-rose-700">
          {errorMessage(rotate.error)}
        </p>
      )}
      {shown && (
        <div aria-live="polite" className="space-y-2 rounded-md border border-emerald-200 bg-emerald-50 p-3 text-sm">
          <p>
            Key <strong>{shown.name}</strong> ({shown.role}) {shown.verb}. It is shown only now: copy it.
          </p>
          <div className="flex items-start gap-2">
            <code
              data-testid="api-key"
              tabIndex={0}
              className="block flex-1 overflow-x-auto rounded bg-slate-900 px-3 py-2 font-mono text-emerald-300 focus-visible:ring-2 focus-visible:ring-sky-500"
            >
              {shown.key}
            </code>
            <CopyButton text={shown.key} label="Copy the API key" />
          </div>
        </div>
      )}
      {keys.isPending ? (
        <LoadingState />
      ) : keys.isError ? (
        <ErrorState error={keys.error} />
      ) : keys.data.items.length === 0 ? (
        <EmptyState>No named API keys. The key from MESH_ADMIN_API_KEY (or printed at first start) always works as admin.</EmptyState>
      ) : (
        <table className="min-w-full text-sm">
          <ColumnHeads names={["Key", "Role", "Created", "Status"]} cell="px-2 py-1" actions />
          <tbody className="divide-y divide-slate-100">
            {keys.data.items.map((k) => (
              <tr key={k.id} data-testid="api-key-row">
                <td className="px-2 py-1">
                  <span className="font-medium">{k.name}</span> <span className="font-mono text-xs text-slate-600">meshk_{k.id}.…</span>
                </td>
                <td className="px-2 py-1">{k.role}</td>
                <CallerStatusCells createdAt={k.createdAt} createdBy={k.createdBy} revokedAt={k.revokedAt} />
                <td className="space-x-2 whitespace-nowrap px-2 py-1 text-right">
                  {!k.revokedAt && (
                    <>
                      <Button aria-label={`Rotate API key ${k.name}`} disabled={rotate.isPending} onClick={() => rotate.mutate({ id: k.id })}>
                        Rotate
                      </Button>
                      <Button aria-label={`Revoke API key ${k.name}`} onClick={() => revoke.mutate({ id: k.id })}>
                        Revoke
                      </Button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
