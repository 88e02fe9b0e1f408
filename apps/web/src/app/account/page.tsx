// Your account (every logged-in user, viewers too): who you are and your password.
import { requireSession } from "@/server/session";
import { Shell } from "@/components/shell";
import { Section } from "@/components/section";
import { ChangePasswordForm } from "@/components/access/change-password-form";

export const dynamic = "force-dynamic";

export default async function AccountPage() {
  const { me } = await requireSession();
  return (
    <Shell me={me}>
      <h1 className="mb-1 text-2xl font-semibold">Your account</h1>
      <p className="mb-4 text-sm text-slate-700">
        You are <strong>{me.name}</strong> ({me.role}); the audit trail names you <code className="font-mono">{me.actor}</code>.
      </p>
      <Section title="Password">
        {me.hasPassword ? (
          <ChangePasswordForm />
        ) : (
          <p className="text-sm text-slate-700">API keys have no password: an admin rotates them on the Users &amp; keys page.</p>
        )}
      </Section>
    </Shell>
  );
}
