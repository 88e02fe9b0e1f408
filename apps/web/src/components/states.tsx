// Loading, empty and error states, looking the same on every page.
import type { ReactNode } from "react";
import { errorMessage } from "./error-message";

export function LoadingState({ label = "Loading…" }: { label?: string }) {
  return (
    <div role="status" aria-live="polite" className="flex items-center gap-2 rounded-lg border border-slate-200 bg-white p-6 text-sm text-slate-600">
      <span aria-hidden className="h-3 w-3 animate-pulse rounded-full bg-slate-400" />
      {label}
    </div>
  );
}

export function EmptyState({ children }: { children: ReactNode }) {
  return <div className="rounded-lg border border-dashed border-slate-300 bg-white p-8 text-center text-sm text-slate-600">{children}</div>;
}

export function ErrorState({ error, title = "Could not load this" }: { error: unknown; title?: string }) {
  return (
    <div role="alert" className="rounded-lg border border-rose-200 bg-rose-50 p-4 text-sm text-rose-800">
      <p className="font-medium">{title}</p>
      <p>{errorMessage(error)}</p>
    </div>
  );
}
