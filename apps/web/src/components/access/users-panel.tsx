"use client";
// Users: create (admin or viewer, with a password), set another user's password
// (their sessions end) and revoke. Your own password is changed on /account.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { ColumnHeads } from "../column-heads";
import { ErrorState, LoadingState } from "../states";
import { errorMessage } from "../error-message";
import { CallerStatusCells, fieldClass, RoleField, type CallerRole } from "./caller-fields";

export function UsersPanel({ me }: { me: string }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const users = useQuery(trpc.user.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.user.list.queryKey() });
  const create = useMutation(trpc.user.create.mutationOptions({ onSuccess: () => (setName(""), setPassword(""), refresh()) }));
  const revoke = useMutation(trpc.user.revoke.mutationOptions({ onSettled: refresh }));
  const setUserPassword = useMutation(trpc.user.setPassword.mutationOptions({ onSuccess: () => (setEditing(null), setNewPassword("")) }));
  const [editing, setEditing] = useState<{ id: string; name: string } | null>(null);
  const [newPassword, setNewPassword] = useState("");
  const [name, setName] = useState("");
  const [role, setRole] = useState<CallerRole>("viewer");
  const [password, setPassword] = useState("");
  return (
    <div className="space-y-4">
      <form className="flex flex-wrap items-end gap-2" onSubmit={(e) => (e.preventDefault(), create.mutate({ name, role, password }))}>
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          User name
          <input value={name} onChange={(e) => setName(e.target.value)} required autoComplete="off" className={fieldClass} />
        </label>
        <RoleField value={role} onChange={setRole} />
        <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
          Password (10+ characters)
          <input
            type="password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            required
            minLength={10}
            autoComplete="new-password"
            className={fieldClass}
          />
        </label>
        <Button type="submit" kind="primary" disabled={create.isPending}>
          Create user
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
      {editing && (
        <form
          aria-label={`Set the password of ${editing.name}`}
          className="flex flex-wrap items-end gap-2 rounded-md border border-slate-200 bg-slate-50 p-3"
          onSubmit={(e) => (e.preventDefault(), setUserPassword.mutate({ id: editing.id, password: newPassword }))}
        >
          <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
            New password for {editing.name} (10+ characters)
            <input
              type="password"
              value={newPassword}
              onChange={(e) => setNewPassword(e.target.value)}
              required
              minLength={10}
              autoComplete="new-password"
              className={fieldClass}
            />
          </label>
          <Button type="submit" kind="primary" disabled={setUserPassword.isPending}>
            Set password
          </Button>
          <Button onClick={() => (setEditing(null), setNewPassword(""))}>Cancel</Button>
          <p className="w-full text-xs text-slate-600">Every session of {editing.name} ends; tell them the new password another way.</p>
        </form>
      )}
      {setUserPassword.isError && (
        <p role="alert" className="text-sm text-rose-700">
          {errorMessage(setUserPassword.error)}
        </p>
      )}
      {setUserPassword.isSuccess && !editing && (
        <p role="status" className="text-sm text-emerald-800">
          Password set; {setUserPassword.data.sessionsEnded} session(s) ended.
        </p>
      )}
      {users.isPending ? (
        <LoadingState />
      ) : users.isError ? (
        <ErrorState error={users.error} />
      ) : (
        <table className="min-w-full text-sm">
          <ColumnHeads names={["User", "Role", "Created", "Status"]} cell="px-2 py-1" actions />
          <tbody className="divide-y divide-slate-100">
            {users.data.items.map((u) => (
              <tr key={u.id} data-testid="user-row">
                <td className="px-2 py-1 font-mono">{u.name}</td>
                <td className="px-2 py-1">{u.role}</td>
                <CallerStatusCells createdAt={u.createdAt} createdBy={u.createdBy} revokedAt={u.revokedAt} />
                <td className="space-x-2 whitespace-nowrap px-2 py-1 text-right">
                  {!u.revokedAt && u.name !== me && (
                    <>
                      <Button
                        aria-label={`Set password of user ${u.name}`}
                        onClick={() => (setEditing({ id: u.id, name: u.name }), setNewPassword(""), setUserPassword.reset())}
                      >
                        Set password
                      </Button>
                      <Button aria-label={`Revoke user ${u.name}`} onClick={() => revoke.mutate({ id: u.id })}>
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
