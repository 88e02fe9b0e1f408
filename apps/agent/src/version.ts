// The host's version: fixed at build time from apps/agent/package.json; source
// runs (tests, tsx) say "dev".
declare const __MESH_HOST_VERSION__: string | undefined;

export const HOST_VERSION: string = typeof __MESH_HOST_VERSION__ === "string" ? __MESH_HOST_VERSION__ : "0.0.0-dev";
