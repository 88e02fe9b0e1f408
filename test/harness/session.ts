// Logs in over HTTP, as a browser's form would, and returns the session cookie:
// for tests that call the API with a session rather than an API key.
export async function sessionCookieFor(baseUrl: string, name: string, password: string): Promise<string> {
  const res = await fetch(`${baseUrl}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name, password }),
  });
  if (!res.ok) throw new Error(`login as ${name} failed: ${res.status}`);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}
