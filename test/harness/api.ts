// Calls the control plane's public tRPC API over HTTP, as automation would.
import { ADMIN_API_KEY } from "./control-plane";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: any,
  ) {
    super(`${status}: ${body?.error?.message ?? JSON.stringify(body)}`);
  }
}

export function api(baseUrl: string, apiKey: string = ADMIN_API_KEY) {
  const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
  async function parse(res: Response) {
    const body: any = await res.json().catch(() => null);
    if (!res.ok) throw new ApiError(res.status, body);
    return body.result.data;
  }
  return {
    query: async (proc: string, input?: unknown) =>
      parse(await fetch(`${baseUrl}/api/trpc/${proc}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`, { headers })),
    mutate: async (proc: string, input?: unknown) =>
      parse(await fetch(`${baseUrl}/api/trpc/${proc}`, { method: "POST", headers, body: JSON.stringify(input ?? {}) })),
  };
}
