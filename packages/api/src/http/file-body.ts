// A response body read from a file descriptor already open (/apt, /download): the descriptor is
// closed however the response ends — read to the end, a read that fails, a client that goes away
// mid-download (the stream is cancelled), or a HEAD request, which reads nothing. Anyone may fetch
// these, so a descriptor left to the garbage collector would let requests run the process out of them.
import type { FileHandle } from "node:fs/promises";

const CHUNK = 64 * 1024;

/** The first `size` bytes of the file, read from `handle` on demand; the handle is closed once done or cancelled. */
export function fileBody(handle: FileHandle, size: number): ReadableStream<Uint8Array> {
  let position = 0;
  let closing: Promise<void> | null = null;
  const close = () => (closing ??= handle.close().catch(() => {}));
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const want = Math.min(CHUNK, size - position);
          if (want > 0) {
            const { bytesRead, buffer } = await handle.read(Buffer.alloc(want), 0, want, position);
            // Shorter than its content-length said (truncated in place): an error, never a short body that looks whole.
            if (bytesRead === 0) throw new Error(`file ended at ${position} of ${size} bytes`);
            position += bytesRead;
            controller.enqueue(new Uint8Array(buffer.buffer, buffer.byteOffset, bytesRead));
          }
          if (position >= size) {
            await close();
            controller.close();
          }
        } catch (err) {
          await close();
          controller.error(err);
        }
      },
      async cancel() {
        await close();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The file as a response: for HEAD only its headers (content-length the file's size), the
 * descriptor closed at once; otherwise its body streamed by fileBody.
 */
export async function fileResponse(method: string, handle: FileHandle, size: number, headers: Record<string, string>): Promise<Response> {
  const all = { ...headers, "content-length": String(size) };
  if (method === "HEAD") {
    await handle.close().catch(() => {});
    return new Response(null, { headers: all });
  }
  return new Response(fileBody(handle, size), { headers: all });
}

/** A HEAD request's answer to a response built for GET: the same status and headers, no body. */
export async function headOf(res: Response): Promise<Response> {
  const headers = new Headers(res.headers);
  if (res.body && !headers.has("content-length")) headers.set("content-length", String((await res.arrayBuffer()).byteLength));
  else await res.body?.cancel();
  return new Response(null, { status: res.status, statusText: res.statusText, headers });
}
