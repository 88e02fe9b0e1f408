// The public half of the release key and whether this is a test build, both fixed at bundle
// time (scripts/build.mjs); no key (a source run, or a build without one) refuses every upgrade.
declare const __MESH_RELEASE_PUBLIC_KEY__: string | undefined;
declare const __MESH_TEST_BUILD__: boolean | undefined;

export const RELEASE_PUBLIC_KEY: string | null =
  typeof __MESH_RELEASE_PUBLIC_KEY__ === "string" && __MESH_RELEASE_PUBLIC_KEY__.length > 0 ? __MESH_RELEASE_PUBLIC_KEY__ : null;

/** Built with MESH_TEST_BUILD=1: trusts the committed test release key, whose private half anyone has. */
export const TEST_BUILD: boolean = typeof __MESH_TEST_BUILD__ === "boolean" && __MESH_TEST_BUILD__;

/** What this build trusts for self-upgrade, as status shows it. */
export type ReleaseTrust = "release-key" | "test-key" | "none";
export const RELEASE_TRUST: ReleaseTrust = RELEASE_PUBLIC_KEY === null ? "none" : TEST_BUILD ? "test-key" : "release-key";

export const TEST_BUILD_WARNING =
  "TEST BUILD: this mesh-host trusts the committed test release key (infra/release/TEST-ONLY-release-private-key.pem), " +
  "whose private half is public: anyone can sign a self-upgrade it would install as root. Never run it on a machine that matters.";

export const NO_RELEASE_KEY =
  "this build of mesh-host has no release key built in (built without MESH_RELEASE_PUBLIC_KEY_FILE), so it cannot verify any release";
