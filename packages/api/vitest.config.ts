import { configDefaults, defineConfig } from "vitest/config";

// `*.measure.test.ts` are measurements (they print figures, assert nothing about time) and are
// not part of `npm test`: `npm run measure -w @mesh/api -- <file>` runs them (see each file's header).
export default defineConfig({
  test: {
    hookTimeout: 60_000,
    testTimeout: 30_000,
    exclude: [...configDefaults.exclude, ...(process.env.MESH_MEASURE ? [] : ["**/*.measure.test.ts"])],
  },
});
