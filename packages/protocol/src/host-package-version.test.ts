// The rollout gate and the host agree on when a host runs a declared `mesh-host` package version.
import { describe, expect, it } from "vitest";
import { hostRunsPackageVersion } from "./index";

describe("hostRunsPackageVersion", () => {
  it.each([
    ["1.2.3", "1.2.3"],
    ["1.2.3", "0:1.2.3"],
    ["1.2.3", "1:1.2.3-1"],
    ["1.2.3", "1.2.3-1"],
    ["1.2.3", "2:1.2.3-0ubuntu1~22.04"],
    ["1.2.3-rc.1", "1.2.3-rc.1"],
    ["1.2.3-rc.1", "1:1.2.3-rc.1"],
    ["1.2.3", "00:1.2.3-1"],
    ["1.2.3-rc.1", "0:1.2.3-rc.1-1"],
  ])("host %s runs package %s", (host, deb) => expect(hostRunsPackageVersion(host, deb)).toBe(true));

  it.each([
    ["1.2.3", "1.2.4"],
    ["1.2.3", "1:1.2.4-1"],
    ["1.2.3", "1.2.30"],
    ["1.2.3", "11.2.3"],
    ["1.2.3-1", "1.2.3"],
    ["1.2.3", ""],
    ["", "1.2.3"],
    [null, "1.2.3"],
    // No Debian version names a release: an empty revision, an epoch that is no number, a ':' without an epoch.
    ["1.2.3", "1.2.3-"],
    ["1.2.3", "0:1.2.3-"],
    ["1.2.3-1", "1.2.3-1-"],
    ["1.2.3", "x:1.2.3"],
    ["1.2.3", "1.2.3-1:"],
  ])("host %s does not run package %s", (host, deb) => expect(hostRunsPackageVersion(host, deb)).toBe(false));
});
