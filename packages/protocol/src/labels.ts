// Labels: small string maps on nodes and tokens that role selectors match.
import { z } from "zod";
import { LIMITS } from "./limits";

export const LabelKey = z
  .string()
  .min(1)
  .max(LIMITS.label)
  .regex(/^[A-Za-z0-9]([A-Za-z0-9_./-]*[A-Za-z0-9])?$/, "a label key: letters, digits, '_', '.', '/', '-'");

export const Labels = z
  .record(LabelKey, z.string().max(LIMITS.labelValue))
  .refine((l) => Object.keys(l).length <= LIMITS.labels, `at most ${LIMITS.labels} labels`);
export type Labels = z.infer<typeof Labels>;
