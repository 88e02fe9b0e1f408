import { describe, expect, it } from "vitest";
import { curlPin, TlsPin, tlsPin } from "./tls-pin";

const HEX = "ab".repeat(32);

describe("the TLS pin", () => {
  it("is sha256:<64 lower-case hex digits> of the key's SPKI digest", () => {
    expect(tlsPin(HEX)).toBe(`sha256:${HEX}`);
    expect(tlsPin(HEX.toUpperCase())).toBe(`sha256:${HEX}`);
    expect(TlsPin.safeParse(`sha256:${HEX}`).success).toBe(true);
  });

  it("refuses what is not one, saying what a pin looks like", () => {
    for (const bad of [HEX, `sha256:${HEX.toUpperCase()}`, `sha256:${HEX.slice(2)}`, `sha1:${HEX}`, `sha256:${"g".repeat(64)}`, `sha256//${HEX}`]) {
      const parsed = TlsPin.safeParse(bad);
      expect(parsed.success, bad).toBe(false);
      expect(parsed.error?.issues[0]?.message).toMatch(/sha256:<64 lower-case hex digits>/);
    }
    expect(() => tlsPin("abc")).toThrow(/not a sha256 in hex/);
  });

  it("is given to curl as the digest in base64 (--pinnedpubkey)", () => {
    expect(curlPin(`sha256:${HEX}`)).toBe("sha256//q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=");
    expect(curlPin(`sha256:${"00".repeat(31)}ff`)).toBe("sha256//AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAP8=");
    expect(() => curlPin("sha256:xyz")).toThrow(/not a TLS pin/);
  });
});
