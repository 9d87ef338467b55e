import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Builds dist/ once per run: tests that spawn processes exercise the package as it ships. */
export default function setup(): void {
  const root = fileURLToPath(new URL("..", import.meta.url));
  execFileSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json"], {
    cwd: root,
    stdio: "inherit",
  });
}
