// Who did something, as the audit trail writes it. Every user and named key is
// namespaced, so no name anyone can choose reads like another actor or a built-in one.
//
//   user:<name>   a dashboard user          key:<name>   a named API key
//   token:<id>    an enrolment token        node:<id>    a host
//   api-key       the admin key (MESH_ADMIN_API_KEY or the one printed at first start)
//   system        the control plane at start (admin user, MESH_ADMIN_PASSWORD, MESH_ADMIN_API_KEY)
//   bootstrap     the first node's one-time secret
//   control-plane the gateway deciding on its own (a link closed by revocation)
//   anonymous     an enrolment without a readable token
//   policy:<name> a role policy the control plane applies on its own (policy:revoke-offline)

export const ACTOR = {
  adminKey: "api-key",
  system: "system",
  bootstrap: "bootstrap",
  controlPlane: "control-plane",
  anonymous: "anonymous",
  revokeOfflinePolicy: "policy:revoke-offline",
  /** The rollout worker's own steps: wave results, halts, releases, completion (rollouts/advance.ts). */
  rollout: "system:rollout",
} as const;

export const userActor = (name: string) => `user:${name}`;
export const keyActor = (name: string) => `key:${name}`;
