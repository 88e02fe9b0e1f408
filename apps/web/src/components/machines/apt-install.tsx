// "Install with apt": the signed apt repository this control plane serves at /apt, as commands for a
// new machine, or what the control plane must install first when its tools are missing.
import type { AptInstallCommands, AptStatus } from "@mesh/api";
import { CopyButton } from "../copy-button";

export function AptInstall({ status, commands, missingMessage }: { status: AptStatus; commands: AptInstallCommands; missingMessage: string | null }) {
  if (missingMessage) {
    return (
      <div role="alert" className="rounded-md border border-amber-300 bg-amber-50 p-4 text-sm text-amber-900">
        <p className="font-medium">The apt repository is not available on this control plane.</p>
        <p className="mt-1">
          It needs {status.missing.programs.join(", ")}. Install them on the control plane with{" "}
          <code className="rounded bg-amber-100 px-1">{`apt-get install ${status.missing.debianPackages.join(" ")}`}</code> and restart it; until then{" "}
          <code className="rounded bg-amber-100 px-1">/apt</code> answers 503 and machines install with the command a token comes with.
        </p>
      </div>
    );
  }
  return (
    <div className="space-y-3 text-sm text-slate-700">
      <p>
        Debian and Ubuntu machines can install mesh-host from this control plane&apos;s own apt repository, so that <code>apt</code> and <code>dpkg</code> know
        it and upgrade it. The repository is signed with a key made by this control plane; apt refuses any index or package that does not match it. As root:
      </p>
      <Command step="1. Trust the repository's key" text={commands.key} />
      <Command step="2. Add the repository" text={commands.source} />
      {commands.transport && (
        <>
          <Command step="3. Let apt reach this control plane" text={commands.transport} />
          <p className="text-xs text-slate-600">
            This control plane&apos;s certificate is checked by its pin, which apt cannot do. The key in step 1 is fetched pinned, and apt checks every file
            against the signed index, whose <code>Valid-Until</code> stops an old copy from being replayed, so apt is told not to check this one host&apos;s
            certificate. With a certificate from a CA the machine trusts, leave this step out.
          </p>
        </>
      )}
      <Command step={`${commands.transport ? 4 : 3}. Install mesh-host with apt`} text={commands.install} />
      <p>Then enrol it with step 2 of a token issued above (its install step is the other way to install).</p>
      {status.debs.length === 0 ? (
        <p className="text-amber-900">
          {"The repository holds no .deb yet: run `npm run package` on the control plane, or copy .debs into its data directory's apt/pool."}
        </p>
      ) : (
        <p className="text-xs text-slate-600">{`It holds ${status.debs.join(", ")}.`}</p>
      )}
      {status.error && <p role="alert" className="text-rose-700">{`The last build of the repository failed: ${status.error}`}</p>}
    </div>
  );
}

function Command({ step, text }: { step: string; text: string }) {
  return (
    <div>
      <p className="mb-1 text-xs font-semibold text-slate-700">{step}</p>
      <div className="flex items-start gap-2">
        <code
          tabIndex={0}
          role="region"
          aria-label={`${step.slice(3)} command`}
          className="block flex-1 overflow-x-auto whitespace-pre rounded bg-slate-900 px-3 py-2 font-mono text-sm text-emerald-300 focus:outline-none dark:bg-slate-100 dark:text-emerald-700 focus-visible:ring-2 focus-visible:ring-sky-500"
        >
          {text}
        </code>
        <CopyButton text={text} label={`Copy the ${step.slice(3).toLowerCase()} command`} />
      </div>
    </div>
  );
}
