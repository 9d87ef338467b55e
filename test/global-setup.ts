import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/**
 * Builds the package once per run, as it ships: dist/ (child processes and worker threads load
 * it) and the web UI in dist/web (the browser tests in test/e2e load it from a real server).
 */
export default function setup(): void {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const run = (args: string[]) =>
    execFileSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  run(["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"]);
  run([
    "node_modules/vite/bin/vite.js",
    "build",
    "--config",
    "web/vite.config.ts",
    "--logLevel",
    "warn",
  ]);
}
