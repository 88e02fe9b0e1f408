// `mesh-host bootstrap --bundle F`: node one. Applies the bundle that raises the control
// plane, waits until it answers, takes a token over loopback with a one-time secret, enrols.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import { z } from "zod";
import { describeZodError } from "@mesh/protocol";
import { HostError, reasonOf } from "../host-error";
import type { Logger } from "../log";
import { controlPlaneRequest } from "../link/control-plane-http";
import { checkDeclaration } from "../reconcile/declaration-check";
import { reconcile } from "../reconcile/reconcile";
import { replaceFile } from "../fs/atomic-file";
import { Root } from "../resources/root";
import { SafePaths } from "../resources/safe-path";
import { loadIdentity } from "../state-dir/identity";
import { lockStateDir } from "../state-dir/lock";
import { DiskStore } from "../store/disk-store";
import { readBundleFile, type BootstrapBundle } from "./bootstrap-bundle";
import { enrolCommand } from "./enrol";
import type { CommonOptions } from "./options";
import { systemClock } from "../clock";
import { sleep } from "../sleep";

/** The control plane's local-only endpoint that trades the bootstrap secret for one enrolment token. */
export const BOOTSTRAP_TOKEN_PATH = "/api/bootstrap/token";

const TokenAnswer = z.object({ token: z.string().min(1).max(256) });

export async function bootstrapCommand(opts: CommonOptions & { bundle?: string; log: Logger }): Promise<number> {
  if (!opts.bundle) throw new HostError("usage", "bootstrap: --bundle F is required");
  const bundle = await readBundleFile(opts.bundle);
  const root = new Root(opts.root);
  const problems = await checkDeclaration({ version: bundle.version, resources: bundle.resources }, root);
  if (problems.length) throw new HostError("bad-input", `--bundle ${opts.bundle}: refused: ${problems.slice(0, 3).join("; ")}`);
  const store = new DiskStore(opts.stateDir);
  await store.init();
  const existing = await loadIdentity(store);
  if (existing.kind === "ok")
    throw new HostError("refused", `already enrolled as node ${existing.identity.nodeId} with ${existing.identity.controlPlaneUrl}; nothing to bootstrap`);

  // 1. The bundle, like any declaration (the host owns what it raises).
  const unlock = await lockStateDir(opts.stateDir);
  try {
    await store.removeLeftovers();
    const { report } = await reconcile(
      { store, root, log: opts.log, enrolled: false },
      { declaration: { version: bundle.version, resources: bundle.resources } },
    );
    if (report.errors.length) {
      throw new HostError(
        "failure",
        `bootstrap: the bundle did not apply: ${report.errors
          .slice(0, 3)
          .map((e) => `${e.id ?? "-"}: ${e.message}`)
          .join("; ")}`,
      );
    }
    process.stdout.write(`bundle applied: ${report.owned.length} resources owned\n`);
  } finally {
    await unlock();
  }

  // 2. The one-time secret, readable by root only; the control plane accepts it once, from loopback.
  // Written and removed through its directory's descriptor, reached safely (safe-path.ts): never through a planted symlink.
  const paths = new SafePaths(opts.root);
  let token: string;
  let url: string;
  try {
    let secretPath: string;
    try {
      secretPath = await paths.hostPath(bundle.controlPlane.secretFile);
    } catch (err) {
      throw new HostError("failure", `bootstrap: cannot write the bootstrap secret at ${bundle.controlPlane.secretFile}: ${reasonOf(err)}`);
    }
    const secret = await writeSecret(secretPath, bundle.controlPlane.secretFile);

    // 3. Healthy: the control plane answers HTTP at all (any status below 500).
    url = bundle.controlPlane.url.replace(/\/+$/, "");
    await waitHealthy(url, bundle.controlPlane.healthTimeoutSeconds * 1000, opts.log);

    // 4. A token for node one, then the ordinary enrolment.
    token = await takeToken(url, secret, bundle);
    await fs.rm(secretPath, { force: true });
  } finally {
    paths.close();
  }
  return enrolCommand({ ...opts, url, token, force: false, caPin: bundle.controlPlane.caPin, insecure: !bundle.controlPlane.caPin, log: opts.log });
}

/** `path`: the host path (in an open directory); `shown`: the declared path, for messages. */
async function writeSecret(path: string, shown: string): Promise<string> {
  const secret = randomBytes(32).toString("hex");
  try {
    await replaceFile(path, secret + "\n", { mode: 0o600 });
  } catch (err) {
    throw new HostError(
      "failure",
      `bootstrap: cannot write the bootstrap secret at ${shown}: ${(err as NodeJS.ErrnoException).code ?? reasonOf(err)} (the bundle must declare its directory)`,
    );
  }
  return secret;
}

async function waitHealthy(url: string, timeoutMs: number, log: Logger): Promise<void> {
  const deadline = systemClock.now() + timeoutMs;
  let last = "";
  for (;;) {
    try {
      const res = await controlPlaneRequest(`${url}/`, { timeoutMs: 5_000, maxBytes: 1024 * 1024 });
      if (res.status < 500) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = reasonOf(err);
    }
    if (systemClock.now() > deadline)
      throw new HostError("failure", `bootstrap: the control plane at ${url} did not become healthy within ${Math.round(timeoutMs / 1000)} s (last: ${last})`);
    log.debug({ url, last }, "waiting for the control plane");
    await sleep(1000);
  }
}

async function takeToken(url: string, secret: string, bundle: BootstrapBundle): Promise<string> {
  let res;
  try {
    res = await controlPlaneRequest(`${url}${BOOTSTRAP_TOKEN_PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      // The bundle's resources go along so the control plane can keep declaring them for node one.
      body: JSON.stringify({ secret, labels: bundle.controlPlane.labels, resources: bundle.resources }),
      timeoutMs: 30_000,
      maxBytes: 64 * 1024,
    });
  } catch (err) {
    throw new HostError("failure", `bootstrap: cannot reach ${url}: ${reasonOf(err)}`);
  }
  if (res.status === 404)
    throw new HostError(
      "refused",
      `bootstrap: the control plane at ${url} has no ${BOOTSTRAP_TOKEN_PATH} endpoint (it needs MESH_BOOTSTRAP_SECRET_FILE support)`,
    );
  if (res.status < 200 || res.status > 299)
    throw new HostError("refused", `bootstrap: the control plane refused the bootstrap secret: HTTP ${res.status} ${res.text().slice(0, 300)}`);
  let body: unknown;
  try {
    body = JSON.parse(res.text());
  } catch {
    throw new HostError("failure", `bootstrap: the control plane answered ${res.status} without JSON`);
  }
  const parsed = TokenAnswer.safeParse(body);
  if (!parsed.success) throw new HostError("failure", `bootstrap: unexpected answer: ${describeZodError(parsed.error)}`);
  return parsed.data.token;
}
