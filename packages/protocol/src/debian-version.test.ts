// One Debian version contract (debian-version.ts): what is a version, and when two are one.
import { describe, expect, it } from "vitest";
import { DebianVersion, PackageResource, normalDebianVersion, parseDebianVersion, sameDebianVersion } from "./index";

describe("DebianVersion", () => {
  it.each([
    ["1.2.3", { epoch: "0", upstream: "1.2.3", revision: null }],
    ["1.2.3-1", { epoch: "0", upstream: "1.2.3", revision: "1" }],
    ["0:1.2.3-1", { epoch: "0", upstream: "1.2.3", revision: "1" }],
    ["1:1.2.3-1", { epoch: "1", upstream: "1.2.3", revision: "1" }],
    ["01:1.2", { epoch: "1", upstream: "1.2", revision: null }],
    ["2:1.2.3-0ubuntu1~22.04", { epoch: "2", upstream: "1.2.3", revision: "0ubuntu1~22.04" }],
    ["1.2.3-rc.1-1", { epoch: "0", upstream: "1.2.3-rc.1", revision: "1" }],
    ["1:2:3-4", { epoch: "1", upstream: "2:3", revision: "4" }],
    ["1.0~rc1+dfsg", { epoch: "0", upstream: "1.0~rc1+dfsg", revision: null }],
    ["7", { epoch: "0", upstream: "7", revision: null }],
    // dpkg warns but installs an upstream version that starts with a letter (third-party repositories ship them).
    ["v1.2.3", { epoch: "0", upstream: "v1.2.3", revision: null }],
    ["1:v1-2", { epoch: "1", upstream: "v1", revision: "2" }],
  ])("%s is a Debian version", (v, parts) => {
    expect(DebianVersion.safeParse(v).success).toBe(true);
    expect(parseDebianVersion(v)).toEqual(parts);
  });

  it.each([
    [""],
    [".1.2.3"],
    ["~1"],
    ["a:1.2.3"],
    [":1.2.3"],
    ["1:"],
    ["1:+1"],
    ["1.2.3-"],
    ["1.2.3-1-"],
    ["1.2:3"],
    ["1:1.2-3:4"],
    ["1.2_3"],
    ["1.2 3"],
    ["1.2.3-1/2"],
    ["-1"],
    [`1.${"0".repeat(127)}`],
  ])("%j is no Debian version", (v) => {
    expect(DebianVersion.safeParse(v).success).toBe(false);
    expect(parseDebianVersion(v)).toBeNull();
  });

  it("is the package resource's version", () => {
    expect(PackageResource.safeParse({ type: "package", id: "nginx", name: "nginx", version: "1:1.24.0-2" }).success).toBe(true);
    expect(PackageResource.safeParse({ type: "package", id: "nginx", name: "nginx", version: "1.24.0-" }).success).toBe(false);
    expect(PackageResource.safeParse({ type: "package", id: "nginx", name: "nginx", version: "1.2:3" }).success).toBe(false);
  });
});

describe("sameDebianVersion", () => {
  it.each([
    ["1.2-1", "1.2-1"],
    ["0:1.2-1", "1.2-1"],
    ["1.2-1", "0:1.2-1"],
    ["00:1.2", "1.2"],
    ["01:1.2", "1:1.2"],
    ["1:1.2.3-1", "1:1.2.3-1"],
  ])("%s and %s are one version", (a, b) => expect(sameDebianVersion(a, b)).toBe(true));

  it.each([
    ["1:1.2-1", "1.2-1"],
    ["1:1.2-1", "2:1.2-1"],
    ["1.2-1", "1.2-2"],
    ["1.2", "1.2-1"],
    ["1.2", "1.20"],
    ["10:1.2", "1:01.2"],
    ["1.2", ""],
    [null, "1.2"],
    ["1.2", undefined],
  ])("%s and %s are two versions", (a, b) => expect(sameDebianVersion(a, b)).toBe(false));

  it("normalDebianVersion drops a zero epoch and leading zeros, and leaves the rest as written", () => {
    expect(normalDebianVersion("0:1.2-1")).toBe("1.2-1");
    expect(normalDebianVersion("007:1.2")).toBe("7:1.2");
    expect(normalDebianVersion("1:1.2-1")).toBe("1:1.2-1");
    expect(normalDebianVersion("not a version")).toBe("not a version");
  });
});
