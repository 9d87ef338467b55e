import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Context } from "hono";
import { RouteNotFoundError } from "./http-errors.js";
import { isApiPath, isGatewayPath } from "./security.js";

/**
 * The built web UI, `dist/web`, found from this file rather than the working directory: this
 * module is `src/server/…` when run from source and `dist/server/…` when built, both two levels
 * under the package root.
 */
export function defaultWebRoot(): string {
  return fileURLToPath(new URL("../../dist/web/", import.meta.url));
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".ico": "image/x-icon",
  ".woff": "font/woff",
  ".woff2": "font/woff2",
  ".ttf": "font/ttf",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json",
  ".wasm": "application/wasm",
};

export const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Agent Lab: web UI not built</title></head>
<body>
<h1>The web UI is not built</h1>
<p>Run <code>npm run build</code> in the agent-lab folder, then reload this page.
The HTTP API under <a href="/api/openapi.json"><code>/api</code></a> works without it.</p>
</body>
</html>
`;

/** A request path as a file under `root`, or null when it is malformed, hidden or outside. */
function fileFor(root: string, path: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return null;
  }
  if (decoded.includes("\0")) return null;
  const segments = decoded.split("/").filter((segment) => segment !== "");
  if (segments.some((segment) => segment.startsWith(".") || segment.includes("\\"))) return null;
  const file = resolve(root, ...segments);
  return file.startsWith(root.endsWith(sep) ? root : root + sep) ? file : null;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Serves the UI: a file when it exists, `index.html` for any other path (the UI routes on the
 * client), 404 for a missing build asset, and a 503 page saying how to build it when it is not.
 */
export function staticAssets(webRoot: string) {
  const root = resolve(webRoot);
  return async (c: Context): Promise<Response> => {
    const path = c.req.path;
    if (isApiPath(path) || isGatewayPath(path)) throw new RouteNotFoundError(c.req.method, path);
    const index = join(root, "index.html");
    if (!existsSync(index)) {
      return c.html(NOT_BUILT_PAGE, 503, { "Cache-Control": "no-store" });
    }
    const file = fileFor(root, path);
    if (file !== null && file !== index && (await isFile(file))) {
      const type = CONTENT_TYPES[extname(file).toLowerCase()] ?? "application/octet-stream";
      // Vite puts content-hashed files under /assets/: their name changes when they do.
      const cache = path.startsWith("/assets/")
        ? "public, max-age=31536000, immutable"
        : "no-cache";
      return c.body(await readFile(file), 200, { "Content-Type": type, "Cache-Control": cache });
    }
    if (path.startsWith("/assets/")) {
      return c.text("not found", 404, { "Cache-Control": "no-store" });
    }
    return c.body(await readFile(index), 200, {
      "Content-Type": CONTENT_TYPES[".html"] as string,
      "Cache-Control": "no-cache",
    });
  };
}
