import Database from "better-sqlite3";
import { type RunningServer, startServer } from "../server/start-server.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { peakGrowth, type Sampled, sampleMedian } from "./scale-measure.js";

/**
 * The lab's real HTTP server in this process over a scale fixture, with a read-only raw connection
 * beside it for the floors, and the measurement of one endpoint: median time of whole requests
 * (read and parsed by the client) and the peak resident memory they added to the process.
 */

export interface ScaleLab {
  store: SqliteSessionStore;
  server: RunningServer;
  /** Read-only, for the raw-SQL floors. */
  raw: Database.Database;
  /**
   * GET with the token; the parsed JSON body, or an error naming the status. With `parse: false`,
   * the body's length in bytes once all of it has arrived: read as it comes, neither joined nor
   * decoded (in this process, fetch's `text()` costs a 55 MB report ~1 s of copying and UTF-8
   * decoding, the client's work as its JSON.parse is, which a browser does in its own process).
   */
  get(path: string, options?: { parse?: boolean }): Promise<unknown>;
  close(): Promise<void>;
}

export async function startScaleLab(path: string): Promise<ScaleLab> {
  const store = new SqliteSessionStore(path);
  const server = await startServer({ store, port: 0, host: "127.0.0.1", log: () => {} });
  const raw = new Database(path, { readonly: true });
  const authorization = `Bearer ${server.token}`;
  return {
    store,
    server,
    raw,
    async get(target, options = {}) {
      let response: Response | null = null;
      for (let attempt = 1; response === null; attempt++) {
        try {
          response = await fetch(new URL(target, server.url), { headers: { authorization } });
        } catch (error) {
          // A kept-alive socket the server closed as this request left: once more on a new one.
          // undici says only "fetch failed"; the cause says what failed.
          const cause = (error as { cause?: { code?: string; message?: string } }).cause;
          if (attempt >= 2) {
            throw new Error(
              `GET ${target}: ${cause?.code ?? ""} ${cause?.message ?? String(error)}`,
            );
          }
          console.log(`    (GET ${target}: ${cause?.code ?? ""} ${cause?.message ?? ""}; retried)`);
        }
      }
      if (options.parse === false && response.ok) {
        let bytes = 0;
        for await (const chunk of response.body ?? []) bytes += chunk.byteLength;
        return bytes;
      }
      const text = await response.text();
      if (!response.ok) {
        throw new Error(`GET ${target}: HTTP ${response.status} ${text.slice(0, 200)}`);
      }
      return JSON.parse(text) as unknown;
    },
    async close() {
      raw.close();
      await server.close();
      store.close();
    },
  };
}

export interface EndpointTiming extends Sampled {
  rss_growth_bytes: number;
  /** Why it could not be measured (an HTTP error, a route that does not exist yet). */
  error: string | null;
  /** The last response's body. */
  body: unknown;
}

export async function timeEndpoint(
  lab: ScaleLab,
  path: string,
  samples = 15,
  budgetMs = 4_000,
): Promise<EndpointTiming> {
  let body: unknown = null;
  try {
    const { result, bytes } = await peakGrowth(() =>
      sampleMedian(
        async () => {
          body = await lab.get(path);
        },
        samples,
        budgetMs,
      ),
    );
    return { ...result, rss_growth_bytes: bytes, error: null, body };
  } catch (error) {
    return { ...unmeasured((error as Error).message.split("\n")[0] ?? "failed"), body };
  }
}

/** An endpoint that could not be measured, and why. */
export function unmeasured(error: string): EndpointTiming {
  return { median_ms: Number.NaN, samples: 0, rss_growth_bytes: Number.NaN, error, body: null };
}

/** Times an in-process call (the store's method, a raw query); NaN with the reason when it throws. */
export async function timeCall(
  run: () => unknown,
  samples = 15,
  budgetMs = 4_000,
): Promise<{ median_ms: number; error: string | null }> {
  try {
    const { median_ms } = await sampleMedian(run, samples, budgetMs);
    return { median_ms, error: null };
  } catch (error) {
    return { median_ms: Number.NaN, error: (error as Error).message.split("\n")[0] ?? "failed" };
  }
}

/**
 * Follows `next_cursor` from `path` for `pages` pages: the cursor, or why there is none (the list
 * gives no cursor, or a request failed).
 */
export async function cursorAfter(
  lab: ScaleLab,
  path: string,
  pages: number,
): Promise<{ cursor: string } | { error: string }> {
  let cursor: string | null = null;
  for (let page = 0; page < pages; page++) {
    const separator = path.includes("?") ? "&" : "?";
    const target: string =
      cursor === null ? path : `${path}${separator}cursor=${encodeURIComponent(cursor)}`;
    try {
      const body = (await lab.get(target)) as { next_cursor?: unknown };
      if (typeof body.next_cursor !== "string") return { error: `${path} gives no next_cursor` };
      cursor = body.next_cursor;
    } catch (error) {
      return { error: (error as Error).message.split("\n")[0] ?? "failed" };
    }
  }
  return { cursor: cursor as string };
}
