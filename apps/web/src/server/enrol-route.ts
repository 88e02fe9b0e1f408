// POST /api/enrol served by the server entry itself, beside the gateway's challenge: the
// handler is a plain fetch handler, and going through Next's router cost ~7 ms of a ~28 ms
// enrolment (measured, decision 0020). The Next route stays for `next dev`
// and as the one place a request reaches when this one is not in front of it.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { handleEnrol } from "@mesh/api";
import { getRuntime, remoteAddress, runtimeDeps } from "./runtime";

export const ENROL_PATH = "/api/enrol";

export async function serveEnrol(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  // The body is streamed: readJsonBody stops reading at the enrolment's size limit.
  const request = new Request(`http://localhost${ENROL_PATH}`, {
    method: "POST",
    headers,
    body: Readable.toWeb(req) as ReadableStream,
    duplex: "half",
  } as RequestInit);
  const response = await handleEnrol(runtimeDeps(), request, { address: remoteAddress(request), limits: getRuntime().enrolLimits });
  const body = Buffer.from(await response.arrayBuffer());
  response.headers.forEach((value, name) => res.setHeader(name, value));
  res.writeHead(response.status, { "content-length": body.length });
  res.end(body);
}
