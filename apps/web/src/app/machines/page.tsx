// Add machines: issue a token (admins) and see every token's fate.
import { requireSession } from "@/server/session";
import { Shell } from "@/components/shell";
import { Section } from "@/components/section";
import { IssueTokenForm } from "@/components/machines/issue-token-form";
import { TokenList } from "@/components/machines/token-list";
import { ArtifactStatusNote } from "@/components/machines/artifact-status";
import { AptInstall } from "@/components/machines/apt-install";
import { aptInstallCommands, artifactStatus, missingToolsMessage } from "@mesh/api";
import { headers } from "next/headers";
import { getRuntime, publicUrlFromHeaders } from "@/server/runtime";

export const dynamic = "force-dynamic";

export default async function MachinesPage() {
  const { me, isAdmin } = await requireSession();
  const { config, hostVersion, apt, tlsPin } = getRuntime();
  const artifacts = artifactStatus({ artifactsDir: config.artifactsDir, hostVersion });
  const aptStatus = apt.status();
  const aptCommands = aptInstallCommands(publicUrlFromHeaders(new Headers(await headers())), tlsPin);
  return (
    <Shell me={me}>
      <h1 className="mb-1 text-2xl font-semibold">Add machines</h1>
      <p className="mb-4 text-sm text-slate-700">
        A token enrols a machine that has mesh-host installed. Tokens are single-use unless you say otherwise, and expire.
      </p>
      <div className="space-y-4">
        <ArtifactStatusNote status={artifacts} />
        {isAdmin ? (
          <Section title="Issue a token">
            <IssueTokenForm />
          </Section>
        ) : (
          <p className="rounded-md border border-slate-200 bg-white p-4 text-sm text-slate-700">You are a viewer: an admin issues tokens.</p>
        )}
        <Section title="Install with apt">
          <AptInstall
            status={aptStatus}
            commands={aptCommands}
            missingMessage={aptStatus.missing.programs.length > 0 ? missingToolsMessage(aptStatus.missing) : null}
          />
        </Section>
        <Section title="Tokens">
          <TokenList canEdit={isAdmin} />
        </Section>
      </div>
    </Shell>
  );
}
