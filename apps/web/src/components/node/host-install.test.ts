import { describe, expect, it } from "vitest";
import { hostInstallMeaning } from "./host-install";

describe("hostInstallMeaning", () => {
  it.each([
    ["deb", /package resource/],
    ["tarball", /host resource/],
    ["script", /development.*host resource/],
    [undefined, /not sent: this host is older than the fact/],
    ["rpm", /not one this dashboard knows/],
  ])("%s", (value, meaning) => expect(hostInstallMeaning(value)).toMatch(meaning));
});
