import { describe, expect, it } from "vitest";
import { formatBytes } from "./format-bytes";

describe("formatBytes", () => {
  it.each([
    [0, "0 B"],
    [512, "512 B"],
    [1024, "1 KiB"],
    [1536, "1.5 KiB"],
    [16_747_003_904, "15.6 GiB"],
    [2 * 1024 ** 3, "2 GiB"],
    [250 * 1024 ** 3, "250 GiB"],
    [1024 * 1024 - 1, "1 MiB"],
    [1.5 * 1024 ** 4, "1.5 TiB"],
  ])("%d -> %s", (bytes, shown) => expect(formatBytes(bytes)).toBe(shown));
});
