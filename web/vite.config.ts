import { fileURLToPath } from "node:url";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

const webRoot = fileURLToPath(new URL(".", import.meta.url));

/** The web UI: built into dist/web, served by the lab's server at "/". */
export default defineConfig({
  root: webRoot,
  base: "/",
  plugins: [react()],
  build: {
    outDir: "../dist/web",
    emptyOutDir: true,
    // One bundle served from loopback: ~200 kB gzipped is fine for a local tool, and splitting it
    // would only add requests.
    chunkSizeWarningLimit: 1024,
  },
  server: {
    // Development: `AGENT_LAB_API=http://127.0.0.1:PORT npx vite --config web/vite.config.ts`
    // serves the UI with hot reload and forwards /api to a running `agent-lab serve`.
    // The lab refuses a foreign Host or Origin (DNS rebinding, CSRF): the proxy presents the
    // lab's own host and drops the dev server's Origin.
    proxy: {
      "/api": {
        target: process.env.AGENT_LAB_API ?? "http://127.0.0.1:4173",
        changeOrigin: true,
        headers: { origin: "" },
        configure: (proxy) => {
          proxy.on("proxyReq", (request) => request.removeHeader("origin"));
        },
      },
    },
  },
});
