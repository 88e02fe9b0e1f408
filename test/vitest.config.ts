import { defineConfig } from "vitest/config";

// Whole-system tests start real processes: one file at a time on a 2-core machine.
export default defineConfig({
  test: {
    include: ["e2e/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
