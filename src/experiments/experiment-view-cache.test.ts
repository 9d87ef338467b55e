import { expect, it } from "vitest";
import { ExperimentNotFoundError } from "./experiment-report-from-store.js";
import { EXPERIMENT_SLICE } from "./experiment-runs.js";
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

it("builds one report of an experiment at a time: requests for newer runs wait for it, then share one build", async () => {
  finishedRun("a", 1);
  let building = 0;
  let mostAtOnce = 0;
  let builds = 0;
  // The first build holds after its read until the later requests are in (a fixed 30 ms read
  // left a loaded machine 20 ms to make them: later, and the third request needed a build of
  // its own); it tells when it has read, so the runs written next are not in it.
  let firstRead: () => void = () => {};
  const read = new Promise<void>((resolve) => {
    firstRead = resolve;
  });
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  // A slow store (a large experiment, or PostgreSQL): each build's read takes a while, and
  // the builds of one experiment would run side by side, each holding its runs.
  const slow = new Proxy(lab.store, {
    get(target, property, receiver) {
      if (property !== "experimentScoringRows") return Reflect.get(target, property, receiver);
      return async (...args: Parameters<typeof target.experimentScoringRows>) => {
        builds += 1;
        building += 1;
        mostAtOnce = Math.max(mostAtOnce, building);
        try {
          const rows = await target.experimentScoringRows(...args);
          firstRead();
          await released;
          return rows;
        } finally {
          building -= 1;
        }
      };
    },
  });
  const cache = new ExperimentViewCache(slow);
  const first = cache.get("a");
  await read;
  finishedRun("a", 2);
  const second = cache.get("a");
  finishedRun("a", 3);
  const third = cache.get("a");
  release();
  const views = await Promise.all([first, second, third]);
  expect(mostAtOnce).toBe(1);
  expect(builds).toBe(2);
  expect(views.map(({ view }) => view.report.runs.length)).toStrictEqual([1, 3, 3]);
  expect(views[2]?.view).toBe(views[1]?.view);
  // Current now: served from the cache.
  expect(await cache.get("a")).toMatchObject({ hit: true, view: views[2]?.view });
});

it("lets the event loop run between the slices it reads: a server answers others during a large build", async () => {
  for (let repetition = 1; repetition <= EXPERIMENT_SLICE + 1; repetition++) {
    finishedRun("big", repetition);
  }
  const cache = new ExperimentViewCache(lab.store);
  const order: string[] = [];
  // Another request's work, queued as an I/O callback is: after the build began.
  const building = cache.get("big").then(({ view }) => {
    order.push(`built ${view.report.runs.length}`);
  });
  setImmediate(() => order.push("other request"));
  await building;
  expect(order).toStrictEqual(["other request", `built ${EXPERIMENT_SLICE + 1}`]);
});
