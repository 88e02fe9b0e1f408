// Enrolling a host as the e2e tests do it: a fresh token for its labels from the API, then
// `mesh-host enrol` with it, which must succeed.
import { expect } from "vitest";
import { api } from "./api";
import type { Host } from "./host";

/** Enrols `host` at `url` with a new token carrying `labels`; the node id the host was given. */
export async function enrolHost(host: Host, url: string, labels: Record<string, string>): Promise<string> {
  const { token } = await api(url).mutate("token.create", { labels });
  const r = host.enrol(url, token);
  expect(r.code, r.stderr + r.stdout).toBe(0);
  return host.status().nodeId as string;
}
