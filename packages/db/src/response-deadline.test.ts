// The framer behind the response deadline finds the same messages however the stream is cut.
import { describe, expect, it } from "vitest";
import { MessageFramer } from "./response-deadline";

const message = (type: string | null, body: Buffer) => {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length + 4);
  return Buffer.concat([...(type === null ? [] : [Buffer.from(type)]), head, body]);
};

describe("MessageFramer", () => {
  const stream = Buffer.concat([
    message(null, Buffer.from("\u0000\u0003\u0000\u0000user\u0000x\u0000\u0000")),
    message("P", Buffer.alloc(300, 1)),
    message("H", Buffer.alloc(0)),
    message("S", Buffer.alloc(0)),
    message("Q", Buffer.from("select 1\u0000")),
  ]);
  const expected = [null, "P", "H", "S", "Q"];

  it("reads an untyped first message, then typed ones, across every split point", () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const seen: Array<string | null> = [];
      const framer = new MessageFramer(true, (type) => seen.push(type === null ? null : String.fromCharCode(type)));
      framer.push(stream.subarray(0, cut));
      framer.push(stream.subarray(cut));
      expect(seen, `cut at ${cut}`).toEqual(expected);
    }
  });

  it("reads a stream fed one byte at a time", () => {
    const seen: Array<string | null> = [];
    const framer = new MessageFramer(true, (type) => seen.push(type === null ? null : String.fromCharCode(type)));
    for (const byte of stream) framer.push(Buffer.from([byte]));
    expect(seen).toEqual(expected);
  });
});
