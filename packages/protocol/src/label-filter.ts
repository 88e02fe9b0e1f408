// Label conditions for finding nodes (issue 13): `tier=web, zone=a`, written as the label editor
// writes labels (comma or newline separated), where a bare `key` means "has this label". Parsed
// here, once, so the dashboard marks a filter invalid with the words the API would refuse it with.
import { z } from "zod";
import { LIMITS } from "./limits";
import { LabelKey } from "./labels";

/** One condition: `key=value` (that value) or `key` (any value). */
export const LabelCondition = z
  .string()
  .max(LIMITS.label + 1 + LIMITS.labelValue)
  .superRefine((text, ctx) => {
    const i = text.indexOf("=");
    if (i === 0 || text === "") return void ctx.addIssue({ code: "custom", message: `"${text}": a label key is missing` });
    const key = LabelKey.safeParse(i < 0 ? text : text.slice(0, i));
    if (!key.success) ctx.addIssue({ code: "custom", message: `"${text}": ${key.error.issues[0]?.message ?? "not a label key"}` });
  });

/** All must hold; a key named twice is refused (it would match nothing, or say one thing twice). */
export const LabelConditions = z
  .array(LabelCondition)
  .max(LIMITS.labels, `at most ${LIMITS.labels} label conditions`)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    for (const c of list) {
      const key = splitLabelCondition(c).key;
      if (seen.has(key)) ctx.addIssue({ code: "custom", message: `"${key}" is named twice` });
      seen.add(key);
    }
  });

export interface ParsedLabelCondition {
  key: string;
  value?: string;
}

/** Splits one checked condition. */
export function splitLabelCondition(condition: string): ParsedLabelCondition {
  const i = condition.indexOf("=");
  return i < 0 ? { key: condition } : { key: condition.slice(0, i), value: condition.slice(i + 1) };
}

/** `tier=web, zone=a` → the conditions, or the first reason the text is not a filter. */
export function parseLabelFilter(text: string): { conditions: string[] } | { error: string } {
  const parts = text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part) => {
      const i = part.indexOf("=");
      return i < 0 ? part : `${part.slice(0, i).trim()}=${part.slice(i + 1).trim()}`;
    });
  const parsed = LabelConditions.safeParse(parts);
  if (!parsed.success) return { error: parsed.error.issues[0]?.message ?? "not a label filter" };
  return { conditions: parsed.data };
}
