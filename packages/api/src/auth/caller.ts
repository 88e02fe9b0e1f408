// Who is calling and what they may do: an actor for the audit trail and a role.
// Admins change the fleet; viewers only read it.
import type { UserRole } from "@mesh/db";

export interface Caller {
  /** The actor in the audit trail (auth/actor.ts): `user:<name>`, `key:<name>` or `api-key`. */
  name: string;
  role: UserRole;
  /** Set for a dashboard user's session: the account whose password they may change. */
  user?: SessionUser;
}

export interface SessionUser {
  name: string;
  /** The hash of the session in use, kept when the user changes their own password. */
  sessionIdHash: string;
}
