import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { rememberSecretValue } from "../domain/secrets.js";
import { CaptureSink, characterBoundary } from "./capture-sink.js";

const bytes = (text: string) => Buffer.byteLength(text, "utf8");

describe("CaptureSink", () => {
  it("keeps both bodies whole under the cap, with their sizes", () => {
    const sink = new CaptureSink(1024);
    expect(sink.captured).toBe(false);
    sink.request('{"model":"sim"}');
    sink.response("data: {}\n\n");
    sink.response(new TextEncoder().encode("data: [DONE]\n\n"));
    expect(sink.captured).toBe(true);
    expect(sink.bodies()).toEqual({
      request_body: '{"model":"sim"}',
      response_body: "data: {}\n\ndata: [DONE]\n\n",
      request_bytes: 15,
      response_bytes: 24,
      request_truncated: false,
      response_truncated: false,
    });
  });

  it("cuts each body at the cap in bytes, counts the full size, and says it cut", () => {
    const sink = new CaptureSink(10);
    sink.request("a".repeat(25));
    for (let index = 0; index < 4; index++) sink.response("bcd");
    expect(sink.bodies()).toEqual({
      request_body: "a".repeat(10),
      response_body: "bcdbcdbcdb",
      request_bytes: 25,
      response_bytes: 12,
      request_truncated: true,
      response_truncated: true,
    });
  });

  it("never cuts inside a UTF-8 character, whatever its length, from text or raw bytes", () => {
    for (const character of ["é", "€", "𝄞"]) {
      for (let cap = 1; cap <= 12; cap++) {
        const text = `x${character.repeat(6)}`;
        const sink = new CaptureSink(cap);
        sink.request(text);
        const encoded = new TextEncoder().encode(text);
        // Raw bytes split mid-character, as a network read may deliver them.
        sink.response(encoded.subarray(0, 2));
        sink.response(encoded.subarray(2));
        const body = sink.bodies();
        for (const kept of [body.request_body, body.response_body]) {
          expect(kept).not.toContain("\uFFFD");
          expect(bytes(kept)).toBeLessThanOrEqual(cap);
          expect(text.startsWith(kept)).toBe(true);
          // As much as fits: one more character would not.
          expect(bytes(kept) + bytes(character)).toBeGreaterThan(cap);
        }
        expect(body.request_truncated).toBe(bytes(text) > cap);
        expect(body.response_bytes).toBe(bytes(text));
      }
    }
  });

  it("a retried request replaces the body sent before it", () => {
    const sink = new CaptureSink(100);
    sink.request("first attempt");
    sink.request("second");
    expect(sink.bodies()).toMatchObject({ request_body: "second", request_bytes: 6 });
  });

  it("copies raw chunks, so a reused buffer does not change what was kept", () => {
    const sink = new CaptureSink(100);
    const buffer = new TextEncoder().encode("abc");
    sink.response(buffer);
    buffer.fill(0x7a);
    expect(sink.bodies().response_body).toBe("abc");
    expect(Buffer.from(sink.bodies().response_utf8 ?? [])).toEqual(Buffer.from("abc"));
  });

  it("a reused Buffer (whose slice is a view) changes nothing kept, its last bytes included", () => {
    for (const [text, reuse] of [
      ["abc€", 0xe2],
      ["ab€", 0x61],
    ] as const) {
      const sink = new CaptureSink(100);
      const buffer = Buffer.from(text);
      sink.response(buffer);
      buffer.fill(reuse);
      expect(sink.bodies().response_body, text).toBe(text);
      expect(Buffer.from(sink.bodies().response_utf8 ?? []), text).toEqual(Buffer.from(text));
    }
  });
});

describe("CaptureSink's response bytes (stored as they are when nothing in them is redacted)", () => {
  const encode = (text: string) => new TextEncoder().encode(text);
  const sinkOf = (chunks: readonly (Uint8Array | string)[], cap = 1024) => {
    const sink = new CaptureSink(cap);
    for (const chunk of chunks) sink.response(chunk);
    return sink;
  };

  it("are exactly the kept text's UTF-8, however the reads split it and wherever the cap cuts", () => {
    const text = fc.string({ unit: fc.constantFrom("a", "é", "€", "𝄞", "\n", ":"), maxLength: 30 });
    let given = 0;
    fc.assert(
      fc.property(text, fc.array(fc.nat()), fc.nat({ max: 140 }), (whole, at, cap) => {
        const encoded = encode(whole);
        const places = [
          0,
          ...at.map((place) => place % (encoded.length + 1)).sort((a, b) => a - b),
        ];
        const reads = places.map((place, index) =>
          encoded.subarray(place, places[index + 1] ?? encoded.length),
        );
        const body = sinkOf(reads, cap).bodies();
        if (body.response_body === "") return;
        expect(body.response_utf8).toBeDefined();
        given++;
        expect(Buffer.from(body.response_utf8 ?? [])).toEqual(Buffer.from(body.response_body));
        expect(Buffer.from(body.response_utf8 ?? []).toString("utf8")).toBe(body.response_body);
      }),
      { numRuns: 2000 },
    );
    expect(given).toBeGreaterThan(1000);
  });

  it("are the whole body's across the blocks they are copied into, read small or large", () => {
    const whole = encode(`${"data: é€𝄞 word ".repeat(12_000)}data: [DONE]\n\n`);
    for (const size of [7, 70_001, whole.length]) {
      const reads: Uint8Array[] = [];
      for (let at = 0; at < whole.length; at += size) reads.push(whole.subarray(at, at + size));
      const body = sinkOf(reads, 1 << 20).bodies();
      expect(Buffer.from(body.response_utf8 ?? [])).toEqual(Buffer.from(whole));
      expect(body.response_body).toBe(Buffer.from(whole).toString("utf8"));
    }
  });

  it("are not given when the text is not theirs: a piece as text, bytes that are not UTF-8, a character left open", () => {
    expect(sinkOf([encode("data: "), "{}"]).bodies().response_utf8).toBeUndefined();
    const invalid = sinkOf([encode("ab"), Uint8Array.of(0xff), encode("c")]).bodies();
    expect(invalid.response_body).toBe("ab\uFFFDc");
    expect(invalid.response_utf8).toBeUndefined();
    const open = sinkOf([encode("ab"), encode("€").subarray(0, 2)]).bodies();
    expect(open.response_body).toBe("ab\uFFFD");
    expect(open.response_utf8).toBeUndefined();
    expect(sinkOf([]).bodies().response_utf8).toBeUndefined();
  });

  it("are not given when the text may hold a key, even split between reads: it is redacted as text", () => {
    const shaped = encode('data: {"content":"token: abcdefgh12345678"}\n\n');
    expect(sinkOf([shaped]).bodies().response_utf8).toBeUndefined();
    expect(sinkOf([shaped.subarray(0, 22), shaped.subarray(22)]).bodies().response_utf8).toBe(
      undefined,
    );
    const key = "sink-test-remembered-key-0123456789";
    rememberSecretValue(key);
    const echoed = encode(`data: {"content":"${key}"}\n\n`);
    expect(sinkOf([echoed.subarray(0, 30), echoed.subarray(30)]).bodies().response_utf8).toBe(
      undefined,
    );
    // A key blanked in the answer, split in the raw stream so that no piece holds it whole.
    const sink = sinkOf([encode('data: {"content":"sink-test-remem"}\n\n')]);
    sink.expectBlanked(1);
    expect(sink.bodies().response_utf8).toBeUndefined();
  });
});

/**
 * What a body is, said the plain way: every byte received, kept up to the cap, cut back to the
 * last whole character when something was left out, decoded at once.
 */
function referenceBody(chunks: readonly (Uint8Array | string)[], cap: number) {
  const all = Buffer.concat(chunks.map((chunk) => Buffer.from(chunk)));
  const kept = all.subarray(0, cap);
  const truncated = all.length > kept.length;
  const end = truncated ? characterBoundary(kept, kept.length) : kept.length;
  return { text: kept.subarray(0, end).toString("utf8"), bytes: all.length, truncated };
}

describe("CaptureSink against the plain way (property)", () => {
  it("keeps the text the whole body's bytes, cut at the cap and decoded at once, would give", () => {
    // Text (one to four bytes a character) and raw bytes, valid or not, split anywhere.
    // Lone surrogates too: counted, stored and shown as U+FFFD, as their UTF-8 is.
    const text = fc.string({
      unit: fc.constantFrom("a", "é", "€", "𝄞", "\n", "\ud83d", "\ude00"),
      maxLength: 6,
    });
    const raw = fc.oneof(
      fc.uint8Array({ maxLength: 8 }),
      text.chain((whole) => {
        const encoded = new TextEncoder().encode(whole);
        return fc
          .nat({ max: encoded.length })
          .map((cut) => [encoded.subarray(0, cut), encoded.subarray(cut)]);
      }),
    );
    const chunks = fc
      .array(fc.oneof(text, raw), { maxLength: 10 })
      .map((items) => items.flat() as (Uint8Array | string)[]);
    fc.assert(
      fc.property(chunks, fc.nat({ max: 48 }), fc.array(fc.nat()), (items, cap, reads) => {
        const sink = new CaptureSink(cap);
        // The body may be read part way (even mid-character): it is the body so far, and reading
        // it changes nothing that comes after.
        const readAt = new Set(reads.map((read) => read % (items.length + 1)));
        const check = (count: number) => {
          const body = sink.bodies();
          expect({
            text: body.response_body,
            bytes: body.response_bytes,
            truncated: body.response_truncated,
          }).toEqual(referenceBody(items.slice(0, count), cap));
        };
        items.forEach((chunk, index) => {
          if (readAt.has(index)) check(index);
          sink.response(chunk);
        });
        check(items.length);
      }),
      { numRuns: 3000 },
    );
  });
});

describe("characterBoundary", () => {
  it("steps back to the start of a character cut short", () => {
    const text = new TextEncoder().encode("a€b"); // 61 e2 82 ac 62
    expect([0, 1, 2, 3, 4, 5].map((end) => characterBoundary(text, end))).toEqual([
      0, 1, 1, 1, 4, 5,
    ]);
  });
});
