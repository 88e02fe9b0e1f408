// Whether the session cookie is marked Secure: whenever browsers reach us over https,
// here (TLS), through a TLS-terminating proxy (MESH_PUBLIC_URL https, or a trusted proxy's X-Forwarded-Proto).
import { getRuntime, ORIGIN_HEADER } from "./runtime";

export function sessionCookieSecure(req: Request): boolean {
  const { config, tlsPin } = getRuntime();
  return !!tlsPin || !!config.publicUrl?.startsWith("https://") || !!req.headers.get(ORIGIN_HEADER)?.startsWith("https://");
}
