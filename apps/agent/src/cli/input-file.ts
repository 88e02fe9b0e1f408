// A JSON file named on the command line (--file, --bundle): a regular file under
// the size limit, valid JSON, and valid for its schema; else exit 2 naming what is wrong.
import { readBoundedFile } from "./bounded-file";
import type { z } from "zod";
import { LIMITS, describeZodError } from "@mesh/protocol";
import { HostError } from "../host-error";

export async function readInputFile<S extends z.ZodType>(flag: string, file: string, schema: S): Promise<z.infer<S>> {
  let text: string;
  try {
    const read = await readBoundedFile(file, LIMITS.frameBytes);
    if (!read.ok && read.problem === "not a regular file") throw new HostError("bad-input", `${flag} ${file}: not a regular file`);
    if (!read.ok) throw new HostError("bad-input", `${flag} ${file}: larger than ${LIMITS.frameBytes} bytes`);
    text = read.text;
  } catch (err) {
    if (err instanceof HostError) throw err;
    throw new HostError("bad-input", `${flag} ${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new HostError("bad-input", `${flag} ${file}: not valid JSON (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new HostError("bad-input", `${flag} ${file}: ${describeZodError(parsed.error)}`);
  return parsed.data;
}
