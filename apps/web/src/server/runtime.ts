// Hands the server entry's one database to the route handlers. Next bundles routes
// separately from server.ts, so a module singleton is not shared: globalThis under
// a Symbol.for key is. Read it inside handlers, never at module top level.
import type { Database } from "@mesh/db";
import type { AptRepository, Deps, EnrolLimits, Grants, LocalPush, Logger, LoginLimits } from "@mesh/api";
import type { Config } from "./config";

export interface Runtime {
  database: Database;
  log: Logger;
  config: Config;
  enrolLimits: EnrolLimits;
  loginLimits: LoginLimits;
  grants: Grants;
  /** The host version this control plane serves at /download. */
  hostVersion: string;
  /** The signed apt repository served at /apt (built from the artifacts' and MESH_DATA_DIR/apt/pool's .debs). */
  apt: AptRepository;
  /** The pin of the certificate served, when TLS is on; enrol commands carry it. */
  tlsPin?: string;
  /** This process's gateway (MESH_ROLE=all): a role save's frames go to its links right after commit. */
  localPush?: LocalPush;
}

const KEY = Symbol.for("mesh.runtime");
type Holder = { [KEY]?: Runtime };

export function setRuntime(runtime: Runtime): void {
  (globalThis as Holder)[KEY] = runtime;
}

export function getRuntime(): Runtime {
  const runtime = (globalThis as Holder)[KEY];
  if (!runtime) throw new Error("the Mesh runtime is not set: start the control plane with `npm start` (src/server.ts), not `next start`");
  return runtime;
}

/** Set once the gateway is up (it is created after the runtime); web-only instances never set it. */
export function setLocalPush(localPush: LocalPush): void {
  getRuntime().localPush = localPush;
}

export function runtimeDeps(): Deps {
  const { database, log, grants, localPush } = getRuntime();
  return { db: database.db, log, grants, ...(localPush ? { localPush } : {}) };
}

/** The peer address, as the server entry recorded it (never a client-sent header). */
export function remoteAddress(request: Request): string | undefined {
  return request.headers.get(REMOTE_ADDRESS_HEADER) ?? undefined;
}

export const REMOTE_ADDRESS_HEADER = "x-mesh-remote-address";

/** "1" when the request reached us through a proxy (it carried forwarding headers). Next adds its own later. */
export const FORWARDED_HEADER = "x-mesh-forwarded";

export function wasForwarded(request: Request): boolean {
  return request.headers.get(FORWARDED_HEADER) !== "0";
}

/** The origin the request came to, as the server entry validated it (never a client-sent value). */
export const ORIGIN_HEADER = "x-mesh-origin";

/** Headers only the server entry may set; a client-sent copy is dropped before anything reads it. */
export const INTERNAL_HEADERS = [REMOTE_ADDRESS_HEADER, FORWARDED_HEADER, ORIGIN_HEADER] as const;

/** The URL hosts should use: MESH_PUBLIC_URL, else the validated origin the request came to. */
export function publicUrlFromHeaders(headers: Headers): string {
  const { config } = getRuntime();
  if (config.publicUrl) return config.publicUrl;
  const origin = headers.get(ORIGIN_HEADER);
  // The server entry answers 400 to a request without a valid Host, so this is a wiring error.
  if (!origin) throw new Error(`no ${ORIGIN_HEADER} on the request: serve it through src/server.ts`);
  return origin;
}
