import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
export const repoRoot = fileURLToPath(new URL("..", import.meta.url));
/**
 * The built package that child processes load. AGENT_LAB_DIST points the same tests at another
 * build, which is how scripts/prove-migration-race.sh runs them against an unguarded migration.
 */
export const distDir = process.env.AGENT_LAB_DIST ?? join(repoRoot, "dist");
export const distEntryUrl = pathToFileURL(join(distDir, "index.js")).href;
/** The store alone: eight worker threads loading the whole package (tokenizer tables and all) spend
 * most of a round importing, not migrating. */
export const distStoreUrl = pathToFileURL(join(distDir, "store/sqlite/sqlite-session-store.js")).href;
/** A fresh folder per test, removed afterwards. */
export function temporaryDirectory() {
    const path = mkdtempSync(join(tmpdir(), "agent-lab-test-"));
    return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
//# sourceMappingURL=paths.js.map