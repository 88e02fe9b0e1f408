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
}

export const nowOf = (deps: Pick<Deps, "now">): Date => (deps.now ? deps.now() : new Date());
