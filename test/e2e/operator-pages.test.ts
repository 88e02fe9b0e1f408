// What the dashboard tells an operator before anything can go wrong: the Add machines page says
// whether mesh-host is built here (the install command 404s until it is), and a viewer who opens
// an admin page is told it is for admins, not that it does not exist. Server-rendered HTML, read
// over HTTP with a real session.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlane, engines } from "../harness/control-plane";
import { api } from "../harness/api";
import { sessionCookieFor } from "../harness/session";

const engine = engines()[0]!;

describe(`operator pages (${engine})`, () => {
  let cp: ControlPlane;
  const artifacts = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-artifacts-"));
  let viewer = "";

  beforeAll(async () => {
    cp = await ControlPlane.start({ engine, env: { MESH_ARTIFACTS_DIR: artifacts } });
    await api(cp.url).mutate("user.create", { name: "vic", role: "viewer", password: "viewer-password-9" });
    viewer = await sessionCookieFor(cp.url, "vic", "viewer-password-9");
  });
  afterAll(async () => {
    await cp?.dispose();
    fs.rmSync(artifacts, { recursive: true, force: true });
  });

  const page = async (p: string, cookie: string) => {
    const res = await fetch(`${cp.url}${p}`, { headers: { cookie } });
    return { status: res.status, html: await res.text() };
  };

  it("says on Add machines whether mesh-host is built here, and how to build it", async () => {
    const before = await page("/machines", viewer);
    expect(before.status).toBe(200);
    expect(before.html).toMatch(/is not built on this control plane yet/);
    expect(before.html).toMatch(/npm run package/);
    // The install script itself fails loudly: piped into sh, it prints the reason and exits 1.
    const script = await fetch(`${cp.url}/download/install.sh`);
    expect(script.headers.get("x-mesh-artifacts")).toBe("missing");
    const run = spawnSync("sh", [], { input: await script.text(), encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/npm run package/);

    const version = /mesh-host ([^ <]+) is not built/.exec(before.html)![1]!;
    fs.writeFileSync(path.join(artifacts, `mesh-host-${version}-linux-x86_64.tar.gz`), "not really a tarball");
    fs.writeFileSync(path.join(artifacts, `mesh-host_${version}_amd64.deb`), "not really a deb");
    const after = await page("/machines", viewer);
    expect(after.html).not.toMatch(/is not built/);
    expect(after.html).toMatch(/is ready to install here: x86_64/);
    expect(after.html).toContain(`mesh-host_${version}_amd64.deb`);
  });

  it("tells a viewer that admin pages are for admins instead of 'not found'", async () => {
    for (const p of ["/access", "/roles/edit"]) {
      const { status, html } = await page(p, viewer);
      expect(status, p).toBe(200);
      expect(html, p).toContain("Admins only");
    }
  });
});
