// The grant provider interface: a per-node credential created at a provider,
// and revoked there. One real provider so far: Postgres roles.
import type { GrantDeclaration } from "@mesh/protocol";

export type { GrantDeclaration };

export interface GrantProvider {
  readonly name: string;
  /** Creates the principal, or resets its secret if it exists; returns the credential text. */
  issue(principal: string, grant: GrantDeclaration): Promise<string>;
  /** Refuses new logins, ends open sessions, removes the principal. Idempotent. */
  revoke(principal: string): Promise<void>;
  /** Principals this provider holds for Mesh. */
  list(): Promise<string[]>;
}

export type GrantProviders = Partial<Record<GrantDeclaration["provider"], GrantProvider>>;

/** A provider principal name per node and grant: stable, so issuing twice is harmless. */
export function principalFor(nodeId: string, grantId: string): string {
  const clean = grantId.toLowerCase().replace(/[^a-z0-9]/g, "_").slice(0, 30);
  return `mesh_${nodeId.replace(/-/g, "").slice(0, 16)}_${clean}`;
}
