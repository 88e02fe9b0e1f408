"use client";
// "Issue token": one click, and the token is shown once with the exact command.
import { useState } from "react";
import { trpc } from "./trpc-client";

export function IssueTokenButton() {
  const [state, setState] = useState<{ command: string; expiresAt: string } | { error: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [copied, setCopied] = useState(false);

  async function issue() {
    setBusy(true);
    setCopied(false);
    try {
      const created = await trpc.token.create.mutate({});
      setState({ command: created.command, expiresAt: created.expiresAt });
    } catch (err) {
      setState({ error: (err as Error).message });
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="space-y-3">
      <button
        type="button"
        onClick={issue}
        disabled={busy}
        className="rounded-md bg-slate-900 px-4 py-2 text-sm font-medium text-white hover:bg-slate-700 disabled:opacity-50"
      >
        {busy ? "Issuing…" : "Issue token"}
      </button>
      {state && "error" in state && (
        <p role="alert" className="text-sm text-rose-700">
          Could not issue a token: {state.error}
        </p>
      )}
      {state && "command" in state && (
        <div className="rounded-md border border-slate-200 bg-white p-4">
          <p className="mb-2 text-sm text-slate-600">
            Run this on the new machine (shown once; expires {new Date(state.expiresAt).toLocaleString()}):
          </p>
          <div className="flex items-start gap-2">
            <code data-testid="enrol-command" className="block flex-1 overflow-x-auto rounded bg-slate-900 px-3 py-2 font-mono text-sm text-emerald-300">
              {state.command}
            </code>
            <button
              type="button"
              onClick={() => navigator.clipboard?.writeText(state.command).then(() => setCopied(true))}
              className="rounded border border-slate-300 px-3 py-2 text-sm hover:bg-slate-100"
            >
              {copied ? "Copied" : "Copy"}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
