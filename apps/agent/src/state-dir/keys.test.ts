// The state dir's layout is named once: every name distinct, each a valid store key, and the
// upgrade files the same as the installation's rollback script uses (the host never runs it).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkKey } from "../store/store";
import { KEYS, STATE_DIR_NAMES } from "./keys";

describe("the state dir's names", () => {
  it("are distinct, and every store key is one the store accepts", () => {
    const names = [...Object.values(KEYS), ...Object.values(STATE_DIR_NAMES)];
    expect(new Set(names).size).toBe(names.length);
    for (const key of Object.values(KEYS)) expect(() => checkKey(key)).not.toThrow();
  });

  it("name the upgrade files as infra/package/mesh-host-rollback.sh does", () => {
    const script = readFileSync(join(__dirname, "../../../../infra/package/mesh-host-rollback.sh"), "utf8");
    for (const key of [KEYS.upgradeBreadcrumb, KEYS.upgradeExited, KEYS.upgradeFailed]) expect(script).toContain(`"$state/${key}"`);
  });
});
