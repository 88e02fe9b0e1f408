// Scrapes a control plane's /metrics and parses it with a real Prometheus text parser.
import parsePrometheusTextFormat from "parse-prometheus-text-format";

export type Scrape = ReturnType<typeof parsePrometheusTextFormat>;

export async function scrape(url: string, token?: string): Promise<Scrape> {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  if (res.status !== 200) throw new Error(`scrape ${url}: ${res.status} ${await res.text()}`);
  return parsePrometheusTextFormat(await res.text());
}

/** One sample's value: the family's sample whose labels include `labels` (0 when none). */
export function sample(scrape: Scrape, name: string, labels: Record<string, string> = {}): number {
  const family = scrape.find((f) => f.name === name);
  if (!family) throw new Error(`no metric ${name}`);
  const s = family.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return s?.value === undefined ? 0 : Number(s.value);
}
