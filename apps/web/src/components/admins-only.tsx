// What a viewer sees on a page only admins use: the page exists, and who can use it.
import Link from "next/link";

export function AdminsOnly({ what }: { what: string }) {
  return (
    <div role="status" className="rounded-md border border-slate-200 bg-white p-4 text-sm text-slate-700">
      <h1 className="mb-2 text-lg font-semibold text-slate-900">Admins only</h1>
      <p>
        {what} is for admins; you are signed in as a viewer. An admin can change your role on Users &amp; keys.{" "}
        <Link href="/" className="underline">
          Back to the fleet
        </Link>
        .
      </p>
    </div>
  );
}
