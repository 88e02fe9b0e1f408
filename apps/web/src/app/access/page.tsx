// Users & keys (admins): who may use the dashboard and the API, and as what.
import { requireSession } from "@/server/session";
import { Shell } from "@/components/shell";
import { Section } from "@/components/section";
import { AdminsOnly } from "@/components/admins-only";
import { UsersPanel } from "@/components/access/users-panel";
import { ApiKeysPanel } from "@/components/access/api-keys-panel";

export const dynamic = "force-dynamic";

export default async function AccessPage() {
  const { me, isAdmin } = await requireSession();
  if (!isAdmin)
    return (
      <Shell me={me}>
        <AdminsOnly what="Managing users and API keys" />
      </Shell>
    );
  return (
    <Shell me={me}>
      <h1 className="mb-1 text-2xl font-semibold">Users &amp; keys</h1>
      <p className="mb-4 text-sm text-slate-700">Admins change the fleet; viewers only read it. The same holds for API keys.</p>
      <div className="space-y-4">
        <Section title="Users">
          <UsersPanel me={me.name ?? ""} />
        </Section>
        <Section title="API keys">
          <ApiKeysPanel />
        </Section>
      </div>
    </Shell>
  );
}
