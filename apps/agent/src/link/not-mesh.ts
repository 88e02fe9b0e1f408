// A URL that is not a Mesh control plane, said in words: a 404 (or an HTML page) where the
// enrol or challenge path should answer, https against a plain http server, nothing listening.
import { HttpError } from "@mesh/protocol";
import { reasonOf } from "../host-error";

/** Whether a body is the control plane's own error shape ({error, message}). */
function isMeshError(body: string): boolean {
  try {
    return HttpError.safeParse(JSON.parse(body)).success;
  } catch {
    return false;
  }
}

/**
 * Null when the answer may be the control plane's; else why `url` does not look like one. A Mesh
 * control plane answers its own paths with JSON, and its errors as HttpError, never a bare 404 or HTML.
 */
export function notMeshAnswer(url: string, path: string, status: number, body: string, contentType?: string): string | null {
  const html = /html/i.test(contentType ?? "") || /^\s*<(!doctype|html)/i.test(body);
  if ((status === 404 || status === 405) && !isMeshError(body)) {
    return `${url} does not look like a Mesh control plane: ${path} answered HTTP ${status}${html ? " with an HTML page" : ""}. Check the URL (the dashboard's Add machines page shows the command to copy).`;
  }
  if (status >= 200 && status < 300 && html) {
    return `${url} does not look like a Mesh control plane: ${path} answered with an HTML page, not JSON. Check the URL.`;
  }
  return null;
}

/** Why `url` could not be reached, in words (TLS against plain http, nothing listening, no such host). */
export function describeReachFailure(url: string, err: unknown): string {
  const e = (err as { cause?: unknown })?.cause ?? err;
  const code = String((e as { code?: unknown })?.code ?? "");
  // OpenSSL's messages run over several lines: one line is kept.
  const message = reasonOf(e).split("\n")[0]!.trim();
  let u: URL | null = null;
  try {
    u = new URL(url);
  } catch {
    u = null;
  }
  const where = u ? u.host : url;
  if (
    u?.protocol === "https:" &&
    (/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|HTTP_REQUEST|UNKNOWN_PROTOCOL/i.test(code) ||
      /wrong version number|packet length too long|http request/i.test(message))
  ) {
    return `${where} does not speak TLS: is it a plain http server? Try the URL with http:// (and --insecure), or the https URL the dashboard shows (TLS: ${/wrong version number|packet length too long|http request/i.exec(message)?.[0] ?? code})`;
  }
  if (code === "ECONNREFUSED") return `nothing listens at ${where} (connection refused): is the control plane running, and is the port right?`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return `the host name ${u?.hostname ?? where} does not resolve (${code})`;
  if (code === "ECONNRESET" && u?.protocol === "http:") return `${where} closed the connection: does it speak https only? Try the https URL (${message})`;
  return message;
}
