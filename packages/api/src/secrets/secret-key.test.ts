import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadSecretKey } from "./secret-key";
import { createSecretBox } from "./secret-box";

describe("the secret key", () => {
  it("is made once, 0600, in the data directory when MESH_SECRET_KEY is unset", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mesh-key-"));
    const first = loadSecretKey({ dataDir: dir });
    expect(fs.statSync(path.join(dir, "secret.key")).mode & 0o777).toBe(0o600);
    expect(loadSecretKey({ dataDir: dir }).key).toEqual(first.key);
    fs.rmSync(dir, { recursive: true });
  });

  it("comes from MESH_SECRET_KEY when set, and a bad one is refused with a clear message", () => {
    const key = randomBytes(32);
    expect(loadSecretKey({ envKey: key.toString("base64"), dataDir: "/nonexistent" }).key).toEqual(key);
    expect(() => loadSecretKey({ envKey: "short", dataDir: "/nonexistent" })).toThrow(/MESH_SECRET_KEY must be 32 random bytes in base64/);
  });

  it("seals so that only the same key and the same context open", () => {
    const box = createSecretBox(randomBytes(32));
    const sealed = box.seal("DATABASE_URL=postgres://u:p@h/d\n", "mesh_a");
    expect(sealed).not.toContain("postgres");
    expect(box.open(sealed, "mesh_a")).toBe("DATABASE_URL=postgres://u:p@h/d\n");
    expect(() => box.open(sealed, "mesh_b")).toThrow(/does not open/);
    expect(() => createSecretBox(randomBytes(32)).open(sealed, "mesh_a")).toThrow(/does not open/);
  });
});
