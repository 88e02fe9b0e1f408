// The public half of the release key, built in at bundle time (scripts/build.mjs,
// env MESH_RELEASE_PUBLIC_KEY); a source run has none and refuses every upgrade.
declare const __MESH_RELEASE_PUBLIC_KEY__: string | undefined;

export const RELEASE_PUBLIC_KEY: string | null =
  typeof __MESH_RELEASE_PUBLIC_KEY__ === "string" && __MESH_RELEASE_PUBLIC_KEY__.length > 0 ? __MESH_RELEASE_PUBLIC_KEY__ : null;
