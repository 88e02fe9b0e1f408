"use client";
// A user changes their own password, proving the current one; their sessions
// elsewhere end, this one stays.
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPC } from "../trpc";
import { Button } from "../button";
import { errorMessage } from "../error-message";
import { fieldClass } from "./caller-fields";

export function ChangePasswordForm() {
  const trpc = useTRPC();
  const [currentPassword, setCurrentPassword] = useState("");
  const [newPassword, setNewPassword] = useState("");
  const [repeated, setRepeated] = useState("");
  const change = useMutation(trpc.user.changePassword.mutationOptions({ onSuccess: () => (setCurrentPassword(""), setNewPassword(""), setRepeated("")) }));
  const mismatch = repeated !== "" && repeated !== newPassword;
  return (
    <form
      className="flex max-w-sm flex-col gap-3"
      onSubmit={(e) => {
        e.preventDefault();
        if (!mismatch) change.mutate({ currentPassword, newPassword });
      }}
    >
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
        Current password
        <input
          type="password"
          value={currentPassword}
          onChange={(e) => setCurrentPassword(e.target.value)}
          required
          autoComplete="current-password"
          className={fieldClass}
        />
      </label>
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
        New password (10+ characters)
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
      <label className="flex flex-col gap-1 text-xs font-medium text-slate-700">
        New password again
        <input
          type="password"
          value={repeated}
          onChange={(e) => setRepeated(e.target.value)}
          required
          minLength={10}
          autoComplete="new-password"
          aria-invalid={mismatch}
          className={fieldClass}
        />
      </label>
      {mismatch && (
        <p role="alert" className="text-sm text-rose-700">
          The two new passwords differ.
        </p>
      )}
      <div>
        <Button type="submit" kind="primary" disabled={change.isPending || mismatch}>
          Change password
        </Button>
      </div>
      {change.isError && (
        <p role="alert" className="text-sm text-rose-700">
          {errorMessage(change.error)}
        </p>
      )}
      {change.isSuccess && (
        <p role="status" className="text-sm text-emerald-800">
          Password changed.{" "}
          {change.data.sessionsEnded > 0
            ? `Your ${change.data.sessionsEnded === 1 ? "other session has" : `${change.data.sessionsEnded} other sessions have`} ended.`
            : "You had no other sessions."}
        </p>
      )}
    </form>
  );
}
