// The grant provider interface: a per-node credential created at a provider,
// and revoked there. One real provider so far: Postgres roles.
import type { GrantDeclaration } from "@mesh/protocol";
import type { SecretBox } from "../secrets/secret-box";

export type { GrantDeclaration };

export interface GrantProvider {
  readonly name: string;
  /** A new credential text for the principal (the file the host receives). Changes nothing at the provider. */
  mint(principal: string, grant: GrantDeclaration): string;
  /** Makes the principal exist with exactly the credential's secret and the grant's access. Idempotent. */
  issue(principal: string, grant: GrantDeclaration, credential: string): Promise<void>;
  /** Refuses new logins, ends open sessions, removes the principal. Idempotent. */
  revoke(principal: string): Promise<void>;
  /** Principals this provider holds for Mesh. */
  list(): Promise<string[]>;
}

export type GrantProviders = Partial<Record<GrantDeclaration["provider"], GrantProvider>>;

/** What grants need: the providers, and the box their secrets are sealed in. */
export interface Grants {
  providers: GrantProviders;
  secrets: SecretBox;
}

/** A provider principal name per node and grant: stable, so issuing twice is harmless. */
export function principalFor(nodeId: string, grantId: string): string {
  const clean = grantId
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "_")
    .slice(0, 30);
  return `mesh_${nodeId.replace(/-/g, "").slice(0, 16)}_${clean}`;
}
