import { describe, expect, it } from "vitest";
import { fetchPages, type Loaded } from "./paging.js";

/** A list of `total` numbers served `size` at a time, the cursor being the next index. */
function server(total: number, size: number) {
  const asked: (string | null)[] = [];
  const fetchPage = async (cursor: string | null): Promise<Loaded<number>> => {
    asked.push(cursor);
    const start = cursor === null ? 0 : Number(cursor);
    const end = Math.min(total, start + size);
    const items = Array.from({ length: end - start }, (_, index) => start + index);
    return { items, next_cursor: end < total ? String(end) : null };
  };
  return { asked, fetchPage };
}

describe("fetchPages", () => {
  it("follows next_cursor to the end of a list", async () => {
    const { asked, fetchPage } = server(12, 5);
    const loaded = await fetchPages(fetchPage, 100);
    expect(loaded.items).toEqual(Array.from({ length: 12 }, (_, index) => index));
    expect(loaded.next_cursor).toBeNull();
    expect(asked).toEqual([null, "5", "10"]);
  });

  it("stops at the bound and says where the rest starts", async () => {
    const { asked, fetchPage } = server(1_000, 5);
    const loaded = await fetchPages(fetchPage, 12);
    expect(loaded.items).toHaveLength(15);
    expect(loaded.next_cursor).toBe("15");
    expect(asked).toEqual([null, "5", "10"]);
    const rest = await fetchPages(fetchPage, 10, loaded.next_cursor);
    expect(rest.items[0]).toBe(15);
  });

  it("reads an empty list as one empty page", async () => {
    const { fetchPage } = server(0, 5);
    expect(await fetchPages(fetchPage, 10)).toEqual({ items: [], next_cursor: null });
  });

  it("refuses a server that hands back the cursor it was given instead of looping", async () => {
    const stuck = async (): Promise<Loaded<number>> => ({ items: [1], next_cursor: "same" });
    await expect(fetchPages(stuck, 100, "same")).rejects.toThrow(/same page cursor twice/);
  });

  it("passes a failed page's error on", async () => {
    const failing = async (): Promise<Loaded<number>> => {
      throw new Error("cursor: not a cursor of this list");
    };
    await expect(fetchPages(failing, 100)).rejects.toThrow(/not a cursor of this list/);
  });
});
