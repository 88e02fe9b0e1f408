// Alerts (admins): webhooks the control plane calls when nodes go offline, fail, drift, conflict,
// are revoked or enrol; each with its delivery log.
import { requireSession } from "@/server/session";
import { Shell } from "@/components/shell";
import { Section } from "@/components/section";
import { WebhooksPanel } from "@/components/alerts/webhooks-panel";
import { AdminsOnly } from "@/components/admins-only";

export const dynamic = "force-dynamic";

export default async function AlertsPage() {
  const { me, isAdmin } = await requireSession();
  if (!isAdmin)
    return (
      <Shell me={me}>
        <AdminsOnly what="Configuring alerts" />
      </Shell>
    );
  return (
    <Shell me={me}>
      <h1 className="mb-1 text-2xl font-semibold">Alerts</h1>
      <p className="mb-4 text-sm text-slate-700">
        Webhooks get a signed POST (<code>x-mesh-signature: sha256=</code>HMAC of the body with the webhook&apos;s secret) when something happens; many nodes at
        once are one delivery listing them. Failed deliveries are retried with backoff.
      </p>
      <Section title="Webhooks">
        <WebhooksPanel />
      </Section>
    </Shell>
  );
}
