import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { runAgentLab } from "./scale-cli.js";
import type { Clone } from "./scale-clone.js";
import { cloneSessions } from "./scale-clone.js";
import { cached, DEFAULT_CACHE_DIR, finish, fixtureKey, openForBulk } from "./scale-fixtures.js";

/**
 * Experiments of many runs: the bundled suite run once for real by `agent-lab bench` (56 runs,
 * 4 cells × 14 scenarios, sim model), then cloned as further repetitions of the same runs, each
 * clone's config carrying its own repetition and run key. One file holds one experiment per entry
 * of `runCounts`, named `scale-<runs>`.
 */

export const experimentId = (runs: number) => `scale-${runs}`;

export async function experimentFixture(
  runCounts: readonly number[],
  directory = DEFAULT_CACHE_DIR,
) {
  return cached(directory, `experiments-${runCounts.join("-")}`, async (path) => {
    const templatePath = join(directory, fixtureKey(), `bundled-${process.pid}.sqlite3`);
    await runAgentLab([
      "--db",
      templatePath,
      "bench",
      "bundled",
      "--repetitions",
      "1",
      "--experiment",
      "scale-template",
      "--json",
    ]);
    const template = new Database(templatePath, { readonly: true });
    const runs = (
      template
        .prepare("SELECT id, title FROM sessions WHERE experiment_id = ? ORDER BY created_at, id")
        .all("scale-template") as { id: string; title: string }[]
    ).map((row) => row);
    template.close();
    if (runs.length === 0) throw new Error("agent-lab bench recorded no runs for the template");

    try {
      cloneExperiments(path, templatePath, runs, runCounts);
    } finally {
      for (const suffix of ["", "-wal", "-shm"]) rmSync(templatePath + suffix, { force: true });
    }
  });
}

function cloneExperiments(
  path: string,
  templatePath: string,
  runs: readonly { id: string; title: string }[],
  runCounts: readonly number[],
): void {
  const db = openForBulk(path);
  db.prepare("ATTACH DATABASE ? AS tmpl").run(templatePath);
  const epoch = Date.parse("2026-02-01T00:00:00Z");
  for (const count of runCounts) {
    const clones: Clone[] = [];
    for (let index = 0; index < count; index++) {
      const run = runs[index % runs.length] as { id: string; title: string };
      clones.push({
        new_id: `${experimentId(count)}-${String(index).padStart(6, "0")}`,
        template_id: run.id,
        title: run.title,
        created_at: new Date(epoch + index * 1000).toISOString(),
        experiment_id: experimentId(count),
        repetition: Math.floor(index / runs.length) + 1,
      });
    }
    cloneSessions(db, "tmpl", clones);
  }
  db.exec("DETACH DATABASE tmpl");
  finish(db, path);
}
