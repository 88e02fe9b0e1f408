// Where `mesh-host enrol` takes its token from: --token T, --token - (standard input)
// or --token-file F, so that the secret need not sit in `ps` output and shell history.
import { HostError } from "../host-error";
import { readBoundedFile } from "./bounded-file";

const TOKEN_MAX = 256;
/** A token file or stdin holds one token and a newline; anything much larger is not a token. */
const SOURCE_MAX_BYTES = 4096;

/** Reads up to the first newline (a token pasted at a terminal ends there) or the end. */
async function readFirstLine(stream: NodeJS.ReadableStream, what: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
    const newline = b.indexOf(0x0a);
    const part = newline >= 0 ? b.subarray(0, newline) : b;
    size += part.length;
    if (size > SOURCE_MAX_BYTES) throw new HostError("usage", `enrol: ${what} is larger than ${SOURCE_MAX_BYTES} bytes; it should hold only the token`);
    chunks.push(part);
    if (newline >= 0) break;
  }
  return Buffer.concat(chunks).toString("utf8");
}

function checked(raw: string, what: string): string {
  const token = raw.trim();
  if (token.length === 0) throw new HostError("usage", `enrol: ${what} is empty`);
  if (/\s/.test(token)) throw new HostError("usage", `enrol: ${what} must hold one token and nothing else`);
  if (token.length > TOKEN_MAX) throw new HostError("usage", `enrol: the token from ${what} is longer than ${TOKEN_MAX} characters`);
  return token;
}

export async function readEnrolToken(opts: { token?: string; tokenFile?: string }, stdin: NodeJS.ReadableStream = process.stdin): Promise<string> {
  if (opts.token !== undefined && opts.tokenFile !== undefined) throw new HostError("usage", "enrol: give either --token or --token-file, not both");
  if (opts.tokenFile !== undefined) {
    let read;
    try {
      read = await readBoundedFile(opts.tokenFile, SOURCE_MAX_BYTES);
    } catch (err) {
      throw new HostError("usage", `enrol: --token-file ${opts.tokenFile}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    }
    if (!read.ok && read.problem === "not a regular file") throw new HostError("usage", `enrol: --token-file ${opts.tokenFile}: not a regular file`);
    if (!read.ok) throw new HostError("usage", `enrol: --token-file ${opts.tokenFile} is larger than ${SOURCE_MAX_BYTES} bytes; it should hold only the token`);
    return checked(read.text, `--token-file ${opts.tokenFile}`);
  }
  if (opts.token === "-") {
    if ((stdin as { isTTY?: boolean }).isTTY) process.stderr.write("mesh-host: paste the enrolment token and press Enter: ");
    return checked(await readFirstLine(stdin, "standard input"), "standard input");
  }
  if (opts.token === undefined || opts.token === "")
    throw new HostError("usage", "enrol: a token is required: --token T, --token - (read it from standard input) or --token-file F");
  if (opts.token.length > TOKEN_MAX) throw new HostError("usage", `enrol: --token is longer than ${TOKEN_MAX} characters`);
  return opts.token;
}
