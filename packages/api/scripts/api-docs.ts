// Writes docs/api.md, the API reference, from the app router (npm run docs:api -w @mesh/api).
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { renderApiReference } from "../src/api-reference/render-api-reference";

const target = fileURLToPath(new URL("../../../docs/api.md", import.meta.url));
writeFileSync(target, renderApiReference());
console.log(`wrote ${target}`);
