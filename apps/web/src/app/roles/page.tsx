// Roles: what each role declares and to which nodes.
import Link from "next/link";
import { requireSession } from "@/server/session";
import { Shell } from "@/components/shell";
import { RoleList } from "@/components/roles/role-list";

export const dynamic = "force-dynamic";

export default async function RolesPage() {
  const { me, isAdmin } = await requireSession();
  return (
    <Shell me={me}>
      <div className="mb-4 flex flex-wrap items-center justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold">Roles</h1>
          <p className="text-sm text-slate-700">A role gives its resources to every node its selector matches.</p>
        </div>
        {isAdmin && (
          <Link href="/roles/edit" className="rounded-md bg-slate-900 px-3 py-1.5 text-sm font-medium text-white hover:bg-slate-700">
            New role
          </Link>
        )}
      </div>
      <RoleList canEdit={isAdmin} />
    </Shell>
  );
}
