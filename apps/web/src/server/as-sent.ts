// Server-rendered first data must look exactly like what the browser's tRPC client
// receives over HTTP (dates as ISO strings), or polling would swap types under React.
export function asSent<T>(value: unknown): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
