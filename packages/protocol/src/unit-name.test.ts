// The one unit-name rule: what systemd accepts as PREFIX[@INSTANCE].TYPE, and never a path.
import { describe, expect, it } from "vitest";
import { isUnitName, parseUnitName, UnitName } from "./unit-name";

describe("parseUnitName", () => {
  it.each([
    ["nginx.service", { name: "nginx", prefix: "nginx", instance: null, type: "service" }],
    ["getty@tty1.service", { name: "getty@tty1", prefix: "getty", instance: "tty1", type: "service" }],
    ["web@.service", { name: "web@", prefix: "web", instance: "", type: "service" }],
    ["multi-user.target", { name: "multi-user", prefix: "multi-user", instance: null, type: "target" }],
    ["dev-sda1.device", { name: "dev-sda1", prefix: "dev-sda1", instance: null, type: "device" }],
    ["mnt-a\\x2db.mount", { name: "mnt-a\\x2db", prefix: "mnt-a\\x2db", instance: null, type: "mount" }],
  ])("%s", (unit, parts) => {
    expect(parseUnitName(unit)).toEqual(parts);
  });

  it.each(["nginx", "@.service", "@x.service", "../x.service", "a/b.service", "a b.service", ".service", "x.exe", `${"a".repeat(250)}.service`])(
    "refuses %s",
    (unit) => {
      expect(parseUnitName(unit)).toBeNull();
    },
  );

  it("limits the types when asked", () => {
    expect(isUnitName("nginx.service", ["service"])).toBe(true);
    expect(isUnitName("nginx.socket", ["service"])).toBe(false);
  });
});

describe("UnitName (declarations)", () => {
  it("accepts the declarable types and refuses the others", () => {
    expect(UnitName.safeParse("web@blue.service").success).toBe(true);
    expect(UnitName.safeParse("backup.timer").success).toBe(true);
    expect(UnitName.safeParse("user.slice").success).toBe(false);
    expect(UnitName.safeParse("@.service").success).toBe(false);
  });

  it("agrees with isUnitName on what it accepts", () => {
    for (const unit of ["a.service", "a@b@c.service", "a@.service", "a..service", "-.mount"]) {
      expect(UnitName.safeParse(unit).success).toBe(isUnitName(unit, ["service", "socket", "timer", "path", "target", "mount"]));
    }
  });
});
