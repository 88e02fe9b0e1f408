// The `service` provider: the plain functions of service.ts
// behind the ResourceProvider interface, keyed by unit; systemd or the host's own supervisor runs them.
import { z } from "zod";
import type { ServiceResource } from "@mesh/protocol";
import type { State } from "./observed";
import type { ProviderContext, ResourceProvider } from "./provider";
import {
  applyService,
  declaredServiceState,
  describeServiceDrift,
  observeService,
  removeService,
  restoreService,
  serviceState,
  snapshotService,
  type ObservedService,
  type ServiceContext,
} from "./service";

/** What service.ts snapshots, checked when it comes back from store.json. */
const ServiceSnapshot = z.strictObject({
  unit: z.string().max(256),
  unitFile: z
    .discriminatedUnion("kind", [
      z.strictObject({ kind: z.literal("file"), content: z.string() }),
      z.strictObject({ kind: z.literal("symlink"), target: z.string().max(4096) }),
    ])
    .nullable(),
  enabled: z.string().max(64),
  active: z.string().max(64),
});

async function serviceContext(ctx: ProviderContext): Promise<ServiceContext> {
  return { root: ctx.root.dir, manager: await ctx.serviceManager() };
}

/** Every key a declaration could name, so that `project` finds each one. */
const EVERYTHING = (unit: string) => ({ type: "service", id: "x", unit, content: "", enabled: true, state: "running", onDrift: "correct" }) as ServiceResource;

function asState(observed: ObservedService): State {
  return { type: "service", ...serviceState(observed, EVERYTHING(observed.unit)), enabledAs: observed.enabled, active: observed.active };
}

function fromState(state: State): ObservedService {
  return {
    unit: String(state.unit),
    unitFileSha256: typeof state.unitFileSha256 === "string" ? state.unitFileSha256 : null,
    enabled: String(state.enabledAs),
    active: String(state.active),
  };
}

export const serviceProvider: ResourceProvider<ServiceResource> = {
  type: "service",
  atomic: false,

  declared(resource) {
    return { type: "service", ...declaredServiceState(resource) };
  },

  exists(observed) {
    return observed.unitFileSha256 !== null || observed.enabledAs !== "not-found";
  },

  describe(resource, observed) {
    return observed ? describeServiceDrift(resource, fromState(observed)) : null;
  },

  async observe(unit, _resource, ctx) {
    return asState(await observeService(await serviceContext(ctx), unit));
  },

  async apply(resource, observed, ctx) {
    const sctx = await serviceContext(ctx);
    await applyService(sctx, resource, observed ? fromState(observed) : await observeService(sctx, resource.unit));
  },

  async remove(unit, ctx) {
    // Created by the host (nothing stood there): any unit file under /etc/systemd/system is the host's.
    await removeService(await serviceContext(ctx), { type: "service", id: "x", unit, content: "", onDrift: "correct" });
    return { kind: "removed" };
  },

  async snapshot(unit, _observed, ctx) {
    return { kind: "opaque", data: JSON.parse(JSON.stringify(await snapshotService(await serviceContext(ctx), unit))) };
  },

  async restore(unit, original, ctx) {
    const snapshot = original.kind === "opaque" ? ServiceSnapshot.safeParse(original.data) : null;
    if (!snapshot?.success) throw new Error(`service ${unit}: the kept original is not a service snapshot; cannot restore`);
    const outcome = await restoreService(await serviceContext(ctx), snapshot.data);
    return { kind: "restored", ...(outcome.outcome === "approximate" ? { note: outcome.detail } : {}) };
  },
};
