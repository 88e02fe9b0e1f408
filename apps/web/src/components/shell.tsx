// The dashboard's frame: the top bar with navigation, who is logged in, and
// logout. Wraps on a phone; the current page is marked for screen readers.
import Link from "next/link";
import type { ReactNode } from "react";
import { NavLinks } from "./nav-links";

export function Shell({ children, me }: { children: ReactNode; me?: { name: string | null; role: string | null } }) {
  return (
    <div>
      <a href="#main" className="sr-only focus:not-sr-only focus:absolute focus:left-2 focus:top-2 focus:rounded focus:bg-white focus:px-3 focus:py-2">
        Skip to content
      </a>
      <header className="border-b border-slate-200 bg-white">
        <div className="mx-auto flex max-w-6xl flex-wrap items-center justify-between gap-x-6 gap-y-2 px-4 py-3">
          <div className="flex flex-wrap items-center gap-x-6 gap-y-2">
            <Link href="/" className="text-lg font-semibold tracking-tight">
              Mesh
            </Link>
            <NavLinks admin={me?.role === "admin"} />
          </div>
          <div className="flex items-center gap-3 text-sm">
            {me?.name && (
              <Link href="/account" className="rounded px-1 text-slate-600 hover:underline focus-visible:ring-2 focus-visible:ring-sky-500">
                <span className="sr-only">Your account: </span>
                {me.name} <span className="rounded bg-slate-100 px-1.5 py-0.5 text-xs text-slate-700">{me.role}</span>
              </Link>
            )}
            <form action="/api/auth/logout" method="post">
              <button type="submit" className="rounded px-3 py-1.5 text-slate-700 hover:bg-slate-100 focus-visible:ring-2 focus-visible:ring-sky-500">
                Log out
              </button>
            </form>
          </div>
        </div>
      </header>
      <main id="main" className="mx-auto max-w-6xl px-4 py-6">
        {children}
      </main>
    </div>
  );
}
