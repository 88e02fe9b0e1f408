// Who is calling and what they may do: a name for the audit trail and a role.
// Admins change the fleet; viewers only read it.
import type { UserRole } from "@mesh/db";

export interface Caller {
  name: string;
  role: UserRole;
}
