// What every service gets: the database and a logger, passed in (never a
// module-level singleton) so tests hand in PGlite or a fresh Postgres database.
import type { Db } from "@mesh/db";
import type { Logger } from "./log";
import type { Grants } from "./grants/provider";

export interface Deps {
  db: Db;
  log: Logger;
  now?: () => Date;
  /** Where per-node credentials are made and revoked, and the key their secrets are sealed with; none means no grants. */
  grants?: Grants;
  /**
   * This process's gateway, when it runs one (MESH_ROLE=all): told what a fleet compile committed, it
   * sends the frames at once from the compile's own rows and bodies, before the notification comes back
   * and without reading them again (decision 0054). The notification still goes to every
   * gateway; the local one then finds these links up to date.
   */
  localPush?: LocalPush;
}

/** A declaration a commit made current, with its body: what the local gateway needs to send it. */
export interface CommittedDeclaration {
  nodeId: string;
  version: number;
  hash: string;
  resources: unknown[];
  final?: "remove" | "forget" | null;
}

export interface LocalPush {
  /** Call after the commit that made these declarations current (never inside its transaction). */
  committed(rows: CommittedDeclaration[]): void;
}

export const nowOf = (deps: Pick<Deps, "now">): Date => (deps.now ? deps.now() : new Date());
