"use client";
// The dashboard's sections; the one showing is marked aria-current.
import Link from "next/link";
import { usePathname } from "next/navigation";
import { useEffect } from "react";

const LINKS = [
  { href: "/", label: "Fleet", match: (p: string) => p === "/" || p.startsWith("/nodes") },
  { href: "/machines", label: "Add machines", match: (p: string) => p.startsWith("/machines") },
  { href: "/roles", label: "Roles", match: (p: string) => p.startsWith("/roles") },
  { href: "/audit", label: "Audit", match: (p: string) => p.startsWith("/audit") },
];

export function NavLinks({ admin }: { admin: boolean }) {
  const pathname = usePathname() ?? "/";
  // The page (inside its loading boundary) is hydrated once this runs: tests and
  // the fleet benchmark wait for it before typing, since input before then is lost.
  useEffect(() => {
    document.documentElement.dataset.hydrated = "true";
  }, []);
  const links = admin
    ? [
        ...LINKS,
        { href: "/access", label: "Users & keys", match: (p: string) => p.startsWith("/access") },
        { href: "/alerts", label: "Alerts", match: (p: string) => p.startsWith("/alerts") },
      ]
    : LINKS;
  return (
    <nav aria-label="Main">
      <ul className="flex flex-wrap gap-1 text-sm">
        {links.map((l) => {
          const current = l.match(pathname);
          return (
            <li key={l.href}>
              <Link
                href={l.href}
                aria-current={current ? "page" : undefined}
                className={`rounded px-2.5 py-1.5 ${current ? "bg-slate-900 text-white" : "text-slate-700 hover:bg-slate-100"}`}
              >
                {l.label}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
