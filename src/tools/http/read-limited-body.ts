/**
 * Reads at most `maxBytes` of a response body and cancels the rest, so an endless or huge
 * response never costs more memory than the limit.
 */
export async function readLimitedBody(
  response: Response,
  maxBytes: number,
): Promise<{ text: string; cut: boolean; bytes: number }> {
  const reader = response.body?.getReader();
  if (reader === undefined) return { text: "", cut: false, bytes: 0 };
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  let cut = false;
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - bytes;
      if (value.byteLength > room) {
        chunks.push(value.subarray(0, room));
        bytes += room;
        cut = true;
        break;
      }
      chunks.push(value);
      bytes += value.byteLength;
    }
  } finally {
    if (cut) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  // A multi-byte character cut in half at the limit decodes to U+FFFD: harmless, and said so.
  const text = new TextDecoder().decode(Buffer.concat(chunks));
  return { text, cut, bytes };
}
