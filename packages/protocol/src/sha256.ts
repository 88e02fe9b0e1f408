import { z } from "zod";

export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 in lower-case hex");
