// Unit tests live next to the code; the CLI tests need dist/ built first.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts"],
    globalSetup: ["./src/build-before-tests.ts"],
    testTimeout: 15_000,
  },
});
