// Labels typed as `key=value`, comma or newline separated, parsed with the
// protocol's own schema so the form says exactly what the API would refuse.
import { Labels } from "@mesh/protocol";

export function parseLabels(text: string): { labels: Record<string, string> } | { error: string } {
  const labels: Record<string, string> = {};
  for (const part of text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    const i = part.indexOf("=");
    if (i <= 0) return { error: `"${part}" is not key=value` };
    labels[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  const parsed = Labels.safeParse(labels);
  if (!parsed.success) return { error: parsed.error.issues.map((x) => `${x.path.join(".") || "labels"}: ${x.message}`).join("; ") };
  return { labels: parsed.data };
}

export const formatLabels = (labels: Record<string, string>) =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(", ");
