// A raw statement's rows on either driver (postgres.js gives an array, PGlite an object with rows).
export function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : ((result as { rows?: unknown[] }).rows ?? [])) as T[];
}
