import Link from "next/link";

export default function NotFound() {
  return (
    <main className="mx-auto max-w-xl px-4 py-16">
      <h1 className="mb-2 text-lg font-semibold">Not found</h1>
      <p className="text-sm text-slate-700">
        There is nothing here.{" "}
        <Link href="/" className="underline">
          Back to the fleet
        </Link>
        .
      </p>
    </main>
  );
}
