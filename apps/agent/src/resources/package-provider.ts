// The `package` provider: the plain functions of package.ts (dpkg-query, dpkg, apt-get
// over the Runner) behind the ResourceProvider interface, keyed by package name.
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import type { PackageResource } from "@mesh/protocol";
import { digestOf, type State } from "./observed";
import {
  applyPackage,
  chrootlessScriptsFromEnv,
  declaredPackageState,
  describePackageDrift,
  observePackage,
  packageState,
  repairDpkg,
  restorePackage,
  snapshotPackage,
  type ObservedPackage,
  type PackageContext,
} from "./package";
import type { ProviderContext, ResourceProvider } from "./provider";
import { failpoint } from "../failpoint";
import { HOST_PACKAGE } from "../self-upgrade/host-package";

/** What package.ts snapshots, checked when it comes back from store.json. */
const PackageSnapshot = z.strictObject({
  name: z.string().max(128),
  installed: z.boolean(),
  version: z.string().max(128).nullable(),
  status: z.string().max(128),
  deb: z.string().max(4096).nullable(),
});

function packageContext(ctx: ProviderContext): PackageContext {
  return {
    runner: ctx.runner,
    clock: ctx.clock,
    root: ctx.root.dir,
    // A sandbox root without a shell of its own (tests, dry runs) runs maintainer scripts outside it.
    chrootlessScripts: chrootlessScriptsFromEnv(ctx.root.dir),
    // A source .deb is streamed (capped, its sha256 checked) into a new temp file dpkg can read;
    // "wx" never opens a name someone else planted.
    async download(source) {
      const file = join(tmpdir(), `mesh-host-${randomBytes(6).toString("hex")}.deb`);
      const fh = await fs.open(file, "wx", 0o600);
      try {
        await ctx.fetchSource(source, fh);
        await fh.close();
      } catch (err) {
        await fh.close().catch(() => undefined);
        await fs.rm(file, { force: true });
        throw err;
      }
      return file;
    },
  };
}

function asState(observed: ObservedPackage): State {
  return { type: "package", ...packageState(observed), status: observed.status };
}

function fromState(state: State): ObservedPackage {
  return {
    name: String(state.name),
    installed: state.installed === true,
    version: typeof state.version === "string" ? state.version : null,
    status: String(state.status),
  };
}

export const OWN_PACKAGE_ABSENT = `package ${HOST_PACKAGE} cannot be declared absent: it is the host itself, which would be removed half way through the apply; refused (retire the node and uninstall it by hand)`;
export const OWN_PACKAGE_RELEASED = `${HOST_PACKAGE} is the host's own package: left installed as it is (the host never removes or downgrades itself on leaving); no longer owned`;

export const packageProvider: ResourceProvider<PackageResource> = {
  type: "package",
  atomic: false,

  declared(resource) {
    const { name, installed, version } = declaredPackageState(resource);
    // "Installed, any version" names no version, so an upgrade is not drift.
    return { type: "package", name, installed, ...(installed && version === null ? {} : { version }) };
  },

  exists(observed) {
    return observed.version !== null || String(observed.status).endsWith("config-files");
  },

  describe(resource, observed) {
    return observed ? describePackageDrift(resource, fromState(observed)) : null;
  },

  async prepare(ctx) {
    const pctx = packageContext(ctx);
    const said: string[] = [];
    const repair = await repairDpkg(pctx);
    if (!repair.found.clean) {
      const what = repair.found.packages.join(", ") || "some package";
      if (repair.after.clean) said.push(`dpkg had been interrupted (${what}); repaired with dpkg --configure -a`);
      else said.push(`dpkg had been interrupted (${what}); dpkg --configure -a left: ${repair.after.output.slice(0, 300)}`);
    }
    // dpkg's record after a rolled-back upgrade of the host's own package, not put back for a reason
    // that passes: tried again here, and said in the report (an error, so the loop's backoff retries).
    const settle = await ctx.selfUpgrade?.settleHostPackage(pctx);
    if (settle) said.push(settle);
    return said;
  },

  async observe(name, _resource, ctx) {
    return asState(await observePackage(packageContext(ctx), name));
  },

  async apply(resource, observed, ctx) {
    const pctx = packageContext(ctx);
    // The host's own package: refused if this release was rolled back before; the running binary kept as .prev.
    // Removing the host's own package would remove the host itself, mid-apply.
    if (resource.name === HOST_PACKAGE && resource.state === "absent") throw new Error(OWN_PACKAGE_ABSENT);
    const ownPackage = resource.name === HOST_PACKAGE && resource.state === "installed";
    if (ownPackage) await ctx.selfUpgrade?.beforeHostPackage(resource.version, pctx);
    const downloaded: string[] = [];
    const download = pctx.download!;
    pctx.download = async (source) => {
      const file = await download(source);
      downloaded.push(file);
      return file;
    };
    try {
      await applyPackage(pctx, resource, observed ? fromState(observed) : await observePackage(pctx, resource.name));
      if (ownPackage) failpoint("host-package-installed");
    } finally {
      for (const f of downloaded) await fs.rm(f, { force: true });
      // Nothing replaced (apt failed, the binary kept): the breadcrumb written before dpkg goes.
      if (ownPackage) await ctx.selfUpgrade?.afterHostPackage();
    }
  },

  async remove(name, ctx, applied) {
    if (name === HOST_PACKAGE) return { kind: "released", note: OWN_PACKAGE_RELEASED };
    // Declared absent and found absent: the host made nothing, so there is nothing to take.
    if (applied === digestOf(this.declared({ type: "package", id: "x", name, state: "absent", onDrift: "correct" }))) return { kind: "absent" };
    // The host installed it (it was absent before): put back that absence.
    const outcome = await restorePackage(packageContext(ctx), { name, installed: false, version: null, status: "not-installed", deb: null });
    return outcome.outcome === "unchanged" ? { kind: "absent" } : { kind: "removed" };
  },

  async snapshot(name, _observed, ctx) {
    return { kind: "opaque", data: JSON.parse(JSON.stringify(await snapshotPackage(packageContext(ctx), name))) };
  },

  async restore(name, original, ctx) {
    if (name === HOST_PACKAGE) return { kind: "released", note: OWN_PACKAGE_RELEASED };
    const snapshot = original.kind === "opaque" ? PackageSnapshot.safeParse(original.data) : null;
    if (!snapshot?.success) throw new Error(`package ${name}: the kept original is not a package snapshot; cannot restore`);
    const outcome = await restorePackage(packageContext(ctx), snapshot.data);
    return { kind: "restored", ...(outcome.outcome === "approximate" ? { note: outcome.detail } : {}) };
  },
};
