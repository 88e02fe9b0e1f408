"use client";
// Any page that fails: a plain sentence and a way to try again; no stack trace.
import { Button } from "@/components/button";

export default function ErrorPage({ reset }: { error: Error; reset: () => void }) {
  return (
    <main className="mx-auto max-w-xl px-4 py-16">
      <div role="alert" className="space-y-3 rounded-lg border border-rose-200 bg-rose-50 p-6 text-rose-900">
        <h1 className="text-lg font-semibold">This page could not be shown</h1>
        <p className="text-sm">Something went wrong on the control plane. It has been logged; try again in a moment.</p>
        <Button onClick={reset}>Try again</Button>
      </div>
    </main>
  );
}
