import { defineConfig } from "vitest/config";

// The server tests open PGlite and run every migration in a beforeAll: on a loaded 2-core machine that
// passed vitest's 10 s default (CI, session 7), as the api and db packages found before.
export default defineConfig({ test: { dir: "src", hookTimeout: 60_000, testTimeout: 30_000 } });
