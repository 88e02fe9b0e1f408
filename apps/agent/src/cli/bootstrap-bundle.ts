// The first node's bundle: a declaration that raises the control plane on this machine,
// plus where that control plane answers (loopback only) and where its one-time bootstrap secret goes.
import { z } from "zod";
import { AbsolutePath, Declaration, Labels } from "@mesh/protocol";
import { readInputFile } from "./input-file";

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

export const BootstrapTarget = z.strictObject({
  /** Where the raised control plane answers; loopback only, since the secret must never leave the machine. */
  url: z
    .string()
    .max(2048)
    .refine((u) => {
      try {
        const p = new URL(u);
        return (p.protocol === "http:" || p.protocol === "https:") && LOOPBACK.has(p.hostname);
      } catch {
        return false;
      }
    }, "an http(s) URL on 127.0.0.1, [::1] or localhost"),
  /** The one-time secret the control plane reads (its MESH_BOOTSTRAP_SECRET_FILE); written 0600 by bootstrap. */
  secretFile: AbsolutePath,
  /** For an https control plane: the pin of its certificate key, as in enrol --ca-pin. */
  caPin: z.string().max(80).optional(),
  /** Labels node one enrols with (the control plane's role for the bundle selects on them). */
  labels: Labels.default({}),
  /** How long the control plane may take to become healthy after the bundle is applied. */
  healthTimeoutSeconds: z.number().int().min(1).max(3600).default(300),
});
export type BootstrapTarget = z.infer<typeof BootstrapTarget>;

export const BootstrapBundle = z.strictObject({
  ...Declaration.shape,
  controlPlane: BootstrapTarget,
});
export type BootstrapBundle = z.infer<typeof BootstrapBundle>;

export function readBundleFile(file: string): Promise<BootstrapBundle> {
  return readInputFile("--bundle", file, BootstrapBundle);
}
