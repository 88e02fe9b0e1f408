"use client";
// Any page that fails: a plain sentence and a way to try again; no stack trace. A database
// that cannot answer is named as such (the server marks the error, caller.ts).
import { startTransition } from "react";
import { useRouter } from "next/navigation";
import { Button } from "@/components/button";
import { DATABASE_UNAVAILABLE_DIGEST, DATABASE_UNAVAILABLE_TEXT } from "@/components/database-unavailable";

export default function ErrorPage({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  const router = useRouter();
  const unavailable = error.digest === DATABASE_UNAVAILABLE_DIGEST;
  // The page is rendered on the server: render it again there, not only this boundary.
  const retry = () =>
    startTransition(() => {
      router.refresh();
      reset();
    });
  return (
    <main className="mx-auto max-w-xl px-4 py-16">
      <div role="alert" className="space-y-3 rounded-lg border border-rose-200 bg-rose-50 p-6 text-rose-900">
        <h1 className="text-lg font-semibold">{unavailable ? "The database is unreachable" : "This page could not be shown"}</h1>
        <p className="text-sm">
          {unavailable ? DATABASE_UNAVAILABLE_TEXT : "Something went wrong on the control plane. It has been logged; try again in a moment."}
        </p>
        <Button onClick={retry}>Try again</Button>
      </div>
    </main>
  );
}
