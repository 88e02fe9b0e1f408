"use client";
// Users: create (admin or viewer, with a password) and revoke.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { RelativeTime } from "../relative-time";
import { ErrorState, LoadingState } from "../states";
import { errorMessage } from "../error-message";

const field = "rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm";

export function UsersPanel({ me }: { me: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const users = useQuery(trpc.user.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.user.list.queryKey() });
  const create = useMutation(trpc.user.create.mutationOptions({ onSuccess: () => (setName(""), setPassword(""), refresh()) }));
  const revoke = useMutation(trpc.user.revoke.mutationOptions({ onSettled: refresh }));
  const [name, setName] = useState("");
  const [role, setRole] = useState<"admin" | "viewer">("viewer");
  const [password, setPassword] = useState("");
  return (
    <div className="space-y-4">
      <form className="flex flex-wrap items-end gap-2" onSubmit={(e) => (e.preventDefault(), create.mutate({ name, role, password }))}>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          User name
          <input value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" className={field} />
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Role
          <select value={role} onChange={(e) => setRole(e.target.value as "admin" | "viewer")} className={field}>
            <option value="viewer">viewer</option>
            <option value="admin">admin</option>
          </select>
        </label>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Password (10+ characters)
          <input type="password" value={password} onChange={(e) => setPassword(e.target.value)} required minLength={10} autoComplete="new-password" className={field} />
        </label>
        <Button type="submit" kind="primary" disabled={create.isPending}>
          Create user
        </Button>
      </form>
      {create.isError && <p role="alert" className="text-sm text-rose-700">{errorMessage(create.error)}</p>}
      {revoke.isError && <p role="alert" className="text-sm text-rose-700">{errorMessage(revoke.error)}</p>}
      {users.isPending ? (
        <LoadingState />
      ) : users.isError ? (
        <ErrorState error={users.error} />
      ) : (
        <table className="min-w-full text-sm">
          <thead className="text-left text-slate-700">
            <tr>
              <th scope="col" className="px-2 py-1 font-medium">User</th>
              <th scope="col" className="px-2 py-1 font-medium">Role</th>
              <th scope="col" className="px-2 py-1 font-medium">Created</th>
              <th scope="col" className="px-2 py-1 font-medium">Status</th>
              <th scope="col" className="px-2 py-1 font-medium"><span className="sr-only">Actions</span></th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {users.data.items.map((u) => (
              <tr key={u.id} data-testid="user-row">
                <td className="px-2 py-1 font-mono">{u.name}</td>
                <td className="px-2 py-1">{u.role}</td>
                <td className="px-2 py-1 text-slate-700"><RelativeTime at={u.createdAt} /> by {u.createdBy}</td>
                <td className="px-2 py-1">{u.revokedAt ? <span className="text-rose-700">revoked</span> : "active"}</td>
                <td className="px-2 py-1 text-right">
                  {!u.revokedAt && u.name !== me && (
                    <Button aria-label={`Revoke user ${u.name}`} onClick={() => revoke.mutate({ id: u.id })}>Revoke</Button>
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
