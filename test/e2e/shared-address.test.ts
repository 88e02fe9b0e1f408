// Behind a reverse proxy that is not in MESH_TRUSTED_PROXIES every client shares its address
// (review finding 6): someone else's failed logins from that address do not lock out a user who
// has not failed, the spraying cap still holds pairs that failed, and the operator is told once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_PASSWORD, ControlPlane, engines } from "../harness/control-plane";

const engine = engines()[0]!;

describe(`logins through one shared address (${engine})`, () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await ControlPlane.start({ engine });
  });
  afterAll(() => cp?.dispose());

  const login = (name: string, password: string) =>
    fetch(`${cp.url}/api/auth/login`, {
      method: "POST",
      // What a proxy would add; not believed from a peer that is not a trusted proxy.
      headers: { "content-type": "application/json", "x-forwarded-for": "198.51.100.7" },
      body: JSON.stringify({ name, password }),
    });

  it("lets a user who has not failed log in after others failed past the per-address cap, and warns once about the untrusted forwarding", async () => {
    // 60 failures on 60 names from the one address: past the coarse cap of 50.
    for (let i = 0; i < 60; i++) expect((await login(`someone-${i}`, "wrong-password")).status).toBe(401);
    // A pair that failed before meets the per-address cap...
    expect((await login("someone-0", "wrong-password")).status).toBe(429);
    // ...the admin, who has not failed from there, is not locked out by them.
    expect((await login("admin", ADMIN_PASSWORD)).status).toBe(200);
    const warnings = cp.output.split("\n").filter((l) => l.includes("not in MESH_TRUSTED_PROXIES"));
    expect(warnings).toHaveLength(1);
  }, 120_000);
});
