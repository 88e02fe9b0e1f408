// The roles whose selectors match a node, each linked to its place in the role list.
import Link from "next/link";
import { roleAnchor } from "../roles/role-list";

export const roleHref = (name: string) => `/roles#${encodeURIComponent(roleAnchor(name))}`;

export function NodeRoles({ roles }: { roles: string[] }) {
  return (
    <p className="flex flex-wrap items-center gap-2 text-sm" data-testid="node-roles">
      <span className="text-slate-700">{roles.length === 0 ? "No role matches this node." : roles.length === 1 ? "Role:" : "Roles:"}</span>
      {roles.map((name) => (
        <Link key={name} href={roleHref(name)} className="rounded-full border border-slate-300 bg-white px-2 py-0.5 font-mono text-xs hover:bg-slate-100">
          {name}
        </Link>
      ))}
    </p>
  );
}
