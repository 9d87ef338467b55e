import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { temporaryDirectory } from "../../test/paths.js";
import { defaultWebRoot } from "./static-assets.js";
import { rawRequest, startTestServer, type TestServer } from "./test-fixtures.js";

const INDEX =
  '<!doctype html><html><head><script type="module" src="/assets/app-1234.js"></script></head><body><div id="root"></div></body></html>';

describe("the web UI's files", () => {
  let web: ReturnType<typeof temporaryDirectory>;
  let lab: TestServer;
  beforeEach(async () => {
    web = temporaryDirectory();
    mkdirSync(join(web.path, "assets"));
    writeFileSync(join(web.path, "index.html"), INDEX);
    writeFileSync(join(web.path, "assets", "app-1234.js"), "console.log('ui');");
    writeFileSync(join(web.path, "assets", "app-1234.css"), "body { margin: 0 }");
    writeFileSync(join(web.path, "favicon.svg"), "<svg xmlns='http://www.w3.org/2000/svg'/>");
    writeFileSync(join(web.path, ".secret"), "hidden");
    lab = await startTestServer({ webRoot: web.path });
  });
  afterEach(async () => {
    await lab.close();
    web.remove();
  });

  it("serves files with their content types, and index.html for client-side routes", async () => {
    const cases: [string, string, string][] = [
      ["/", "text/html; charset=utf-8", INDEX],
      ["/index.html", "text/html; charset=utf-8", INDEX],
      ["/assets/app-1234.js", "text/javascript; charset=utf-8", "console.log('ui');"],
      ["/assets/app-1234.css", "text/css; charset=utf-8", "body { margin: 0 }"],
      ["/favicon.svg", "image/svg+xml", "<svg xmlns='http://www.w3.org/2000/svg'/>"],
      ["/sessions/3f1c-42/compare", "text/html; charset=utf-8", INDEX],
      ["/sessions?tab=usage", "text/html; charset=utf-8", INDEX],
    ];
    for (const [path, type, body] of cases) {
      const response = await lab.api(path);
      expect(response.status, path).toBe(200);
      expect(response.headers.get("content-type"), path).toBe(type);
      expect(await response.text(), path).toBe(body);
    }
    expect((await lab.api("/assets/app-1234.js")).headers.get("cache-control")).toMatch(
      /immutable/,
    );
    expect((await lab.api("/")).headers.get("cache-control")).toBe("no-cache");
    const head = await lab.api("/", { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("404 for a missing build asset; never a file outside the build or a hidden one", async () => {
    const missing = await lab.api("/assets/gone-9999.js");
    expect(missing.status).toBe(404);
    for (const path of [
      "/../package.json",
      "/%2e%2e/package.json",
      "/assets/..%2f..%2fpackage.json",
      "/.secret",
      "/%00",
    ]) {
      const response = await rawRequest(lab.url, {
        path,
        headers: { host: new URL(lab.url).host },
      });
      expect(response.body, path).not.toContain('"name"');
      expect(response.body, path).not.toContain("hidden");
    }
    // /api stays the API's: unknown routes are JSON 404s, not the UI.
    const api = await lab.api("/api/not-a-route");
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ error: { code: "not_found" } });
  });
});

describe("the web UI when it is not built", () => {
  it("answers 503 with a page that says how to build it; the API still works", async () => {
    const lab = await startTestServer(); // its web root does not exist
    try {
      for (const path of ["/", "/sessions/1", "/assets/app.js"]) {
        const response = await lab.api(path);
        expect(response.status, path).toBe(503);
        expect(response.headers.get("content-type")).toMatch(/^text\/html/);
        const text = await response.text();
        expect(text).toMatch(/web UI is not built/);
        expect(text).toMatch(/npm run build/);
      }
      expect((await lab.api("/api/health")).status).toBe(200);
    } finally {
      await lab.close();
    }
  });

  it("serves the production build the tests built: no React development runtime in the bundle", async () => {
    // test/global-setup.ts builds dist/web; vitest sets NODE_ENV=test, which a vite build would
    // inherit and turn into a development bundle (jsxDEV, react-dom.development).
    const lab = await startTestServer({ webRoot: defaultWebRoot() });
    try {
      const index = await (await lab.api("/")).text();
      const scripts = [...index.matchAll(/<script[^>]+src="([^"]+\.js)"/g)].map((m) => m[1]);
      expect(scripts.length).toBeGreaterThan(0);
      for (const src of scripts) {
        const response = await lab.api(src as string);
        expect(response.status, src).toBe(200);
        const bundle = await response.text();
        expect(bundle.length, src).toBeGreaterThan(10_000);
        // Booleans, so that a failure names the file instead of printing a 700 kB bundle. The
        // markdown renderer names jsxDEV in an error message; a development build calls it.
        expect(/\bjsxDEV\)\(/.test(bundle), `${src} calls jsxDEV`).toBe(false);
        expect(/columnNumber:\d/.test(bundle), `${src} carries JSX source locations`).toBe(false);
      }
    } finally {
      await lab.close();
    }
  });

  it("finds dist/web from the module's own location, not the working directory", () => {
    expect(defaultWebRoot()).toMatch(/[\\/]dist[\\/]web[\\/]?$/);
    expect(defaultWebRoot()).toBe(join(new URL("../..", import.meta.url).pathname, "dist", "web/"));
  });
});
