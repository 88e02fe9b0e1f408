// The role editor (admins): a new role, or ?name= an existing one with its versions below.
import { notFound } from "next/navigation";
import { requireSession } from "@/server/session";
import { Shell } from "@/components/shell";
import { RoleEditor } from "@/components/roles/role-editor";
import { AdminsOnly } from "@/components/admins-only";
import { RoleVersions } from "@/components/roles/role-versions";
import { RoleRollouts } from "@/components/roles/rollout-list";

export const dynamic = "force-dynamic";

export default async function EditRolePage({ searchParams }: { searchParams: Promise<{ name?: string }> }) {
  const { name } = await searchParams;
  const { api, me, isAdmin } = await requireSession();
  if (!isAdmin)
    return (
      <Shell me={me}>
        <AdminsOnly what="Editing roles" />
      </Shell>
    );
  const existing = name ? (await api.role.list()).find((r) => r.name === name) : undefined;
  if (name && !existing) notFound();
  return (
    <Shell me={me}>
      <h1 className="mb-4 text-2xl font-semibold">{existing ? `Edit role ${existing.name}` : "New role"}</h1>
      {/* As its author wrote it when known (key order, no defaults added), else as stored. */}
      {/* Keyed on the version: a rollback below reloads the editor with the content saved. */}
      <RoleEditor
        key={existing?.version ?? 0}
        initial={
          existing
            ? {
                name: existing.name,
                selector: existing.source?.selector ?? existing.selector,
                resources: existing.source?.resources ?? existing.resources,
                grants: existing.grants,
                revokeOfflineAfter: existing.revokeOfflineAfter ?? null,
              }
            : null
        }
        storedRollout={existing?.rolloutPolicy ?? null}
      />
      {existing && <RoleRollouts name={existing.name} isAdmin={isAdmin} />}
      {existing && <RoleVersions name={existing.name} isAdmin={isAdmin} />}
    </Shell>
  );
}
