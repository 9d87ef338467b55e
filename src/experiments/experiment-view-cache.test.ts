import { expect, it } from "vitest";
import { ExperimentNotFoundError } from "./experiment-report-from-store.js";
import { ExperimentViewCache } from "./experiment-view-cache.js";
import { temporaryStorePerTest } from "./test-fixtures.js";

const lab = temporaryStorePerTest();

/** A finished one-turn run of `experiment`, written directly. */
function finishedRun(experiment: string, repetition: number): string {
  const id = lab.store.createSession({
    title: `${experiment} #${repetition}`,
    config: {
      experiment: {
        id: experiment,
        suite: "suite",
        cell: "cell",
        cell_label: "Cell",
        scenario: "scenario",
        category: "simple",
        repetition,
        run_key: `cell/scenario/${repetition}`,
        expect: [{}],
      },
    },
  });
  lab.store.startTurn(id, { turn_index: 1, user_message: "hi" });
  lab.store.completeTurn(id, { turn_index: 1, wall_time_ms: 3 });
  return id;
}

it("keeps at most `capacity` reports, dropping the least recently used", async () => {
  finishedRun("a", 1);
  finishedRun("b", 1);
  finishedRun("c", 1);
  const cache = new ExperimentViewCache(lab.store, 2);
  const hits = async (id: string) => (await cache.get(id)).hit;
  expect([await hits("a"), await hits("b"), await hits("a")]).toStrictEqual([false, false, true]);
  // c pushes out b, the least recently used; a stays.
  expect(await hits("c")).toBe(false);
  expect(await hits("a")).toBe(true);
  expect(await hits("b")).toBe(false);
});

it("keeps at most `maxRuns` runs across its reports, though always the latest", async () => {
  finishedRun("a", 1);
  finishedRun("a", 2);
  finishedRun("b", 1);
  const cache = new ExperimentViewCache(lab.store, 4, 2);
  const hits = async (id: string) => (await cache.get(id)).hit;
  expect([await hits("a"), await hits("a")]).toStrictEqual([false, true]);
  // b's run would make three: a leaves.
  expect([await hits("b"), await hits("b"), await hits("a")]).toStrictEqual([false, true, false]);
});

it("builds once for requests that arrive together, and refuses an unknown experiment", async () => {
  finishedRun("a", 1);
  const cache = new ExperimentViewCache(lab.store);
  const [first, second] = await Promise.all([cache.get("a"), cache.get("a")]);
  expect(first.hit).toBe(false);
  expect(second.view).toBe(first.view);
  expect(first.view.report.runs).toHaveLength(1);
  await expect(cache.get("nope")).rejects.toThrow(ExperimentNotFoundError);
});
