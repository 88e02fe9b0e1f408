// `mesh-host apply --file F`: one local reconcile of a declaration file, a
// summary on stdout, exit 0 when everything applied and 1 when something failed.
import { Declaration } from "@mesh/protocol";
import { readInputFile } from "./input-file";
import { HostError } from "../host-error";
import type { Logger } from "../log";
import { checkDeclaration } from "../reconcile/declaration-check";
import { reconcile } from "../reconcile/reconcile";
import { Root } from "../resources/root";
import { loadIdentity } from "../state-dir/identity";
import { lockStateDir } from "../state-dir/lock";
import { DiskStore } from "../store/disk-store";
import type { CommonOptions } from "./options";
import { describeOutcome } from "./outcome";
import { HOST_VERSION } from "../version";
import { runningBinaryPath } from "../self-upgrade/binary-path";
import { RELEASE_PUBLIC_KEY } from "../self-upgrade/release-key";
import { SelfUpgrade, trialMsFromEnv } from "../self-upgrade/self-upgrade";

export function readDeclarationFile(file: string): Promise<Declaration> {
  return readInputFile("--file", file, Declaration);
}

export async function applyCommand(opts: CommonOptions & { file?: string; json: boolean; log: Logger }): Promise<number> {
  if (!opts.file) throw new HostError("usage", "apply: --file F is required");
  const declaration = await readDeclarationFile(opts.file);
  const root = new Root(opts.root);
  // Refused as a whole, before the state dir is touched: nothing held is lost.
  const problems = await checkDeclaration(declaration, root);
  if (problems.length)
    throw new HostError(
      "bad-input",
      `--file ${opts.file}: refused: ${problems.slice(0, 3).join("; ")}${problems.length > 3 ? `; and ${problems.length - 3} more` : ""}`,
    );
  const store = new DiskStore(opts.stateDir);
  await store.init();
  const unlock = await lockStateDir(opts.stateDir);
  let outcome;
  try {
    await store.removeLeftovers();
    const identity = await loadIdentity(store);
    outcome = await reconcile(
      {
        store,
        root,
        log: opts.log,
        enrolled: identity.kind === "ok",
        controlPlane:
          identity.kind === "ok"
            ? { url: identity.identity.controlPlaneUrl, nodeId: identity.identity.nodeId, privateKey: identity.privateKey, trust: identity.identity.trust }
            : null,
        // A local apply may upgrade too: the new binary is what the supervisor starts next.
        selfUpgrade: new SelfUpgrade({
          store,
          binary: runningBinaryPath(),
          running: HOST_VERSION,
          trialMs: trialMsFromEnv(),
          publicKey: RELEASE_PUBLIC_KEY,
          log: opts.log,
        }),
      },
      { declaration },
    );
  } finally {
    await unlock();
  }
  const { report, changes, unchanged } = outcome;
  if (opts.json) {
    process.stdout.write(JSON.stringify(report, null, 2) + "\n");
  } else {
    process.stdout.write(describeOutcome(report, changes, unchanged).join("\n") + "\n");
  }
  return report.errors.length ? 1 : 0;
}
