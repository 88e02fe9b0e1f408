// Where the built artefacts the whole-system tests run live.
import path from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
export const WEB_DIR = path.join(REPO, "apps/web");
export const HOST_BIN = path.join(REPO, "apps/agent/dist/mesh-host.js");
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
