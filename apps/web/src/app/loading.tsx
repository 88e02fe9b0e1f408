// Shown while a page's first data loads on the server.
import { LoadingState } from "@/components/states";

export default function Loading() {
  return (
    <main className="mx-auto max-w-6xl px-4 py-6">
      <LoadingState />
    </main>
  );
}
