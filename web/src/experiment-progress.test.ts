import { describe, expect, it } from "vitest";
import type { ExperimentProgress } from "./api-types.js";
import {
  applyExperimentEvent,
  CONNECTING,
  type ExperimentEvent,
  endedBeforeWatching,
  type LiveState,
  parseExperimentEvent,
  progressAdvanced,
  progressShares,
  progressSummary,
  runsDone,
} from "./experiment-progress.js";
import { SseParser } from "./sse.js";

const progress = (counts: Partial<ExperimentProgress> = {}): ExperimentProgress => ({
  total: 10,
  skipped: 0,
  finished: 0,
  failed: 0,
  running: 0,
  last: null,
  ...counts,
});

function events(text: string): (ExperimentEvent | null)[] {
  return new SseParser().push(text).map(parseExperimentEvent);
}

describe("an experiment's event stream", () => {
  it("reads progress, done, cancelled, error and idle events", () => {
    const stream =
      'event: progress\ndata: {"total":4,"skipped":1,"finished":2,"failed":1,"running":1,' +
      '"last":{"run_key":"a/s/1","success":false}}\n\n' +
      'event: done\ndata: {"outcome":{"total":4,"errors":[{"run_key":"a/s/2","message":"x"}]}}\n\n' +
      'event: done\ndata: {"outcome":{"total":4,"errors":[]}}\n\n' +
      "event: cancelled\ndata: {}\n\n" +
      'event: cancelled\ndata: {"total":4,"skipped":0,"finished":3,"failed":0,"running":0,"last":null}\n\n' +
      'event: error\ndata: {"message":"suite file vanished"}\n\n' +
      'event: idle\ndata: {"total":4,"finished":4}\n\n';
    expect(events(stream)).toStrictEqual([
      {
        type: "progress",
        progress: {
          total: 4,
          skipped: 1,
          finished: 2,
          failed: 1,
          running: 1,
          last: { run_key: "a/s/1", success: false },
        },
      },
      { type: "done", errors: 1 },
      { type: "done", errors: 0 },
      { type: "cancelled", progress: null },
      {
        type: "cancelled",
        progress: { total: 4, skipped: 0, finished: 3, failed: 0, running: 0, last: null },
      },
      { type: "error", message: "suite file vanished" },
      {
        type: "idle",
        progress: { total: 4, skipped: 0, finished: 4, failed: 0, running: 0, last: null },
      },
    ]);
  });

  it("ignores unknown events and bad JSON, and reads bad counts as 0", () => {
    expect(events("event: ping\ndata: {}\n\nevent: progress\ndata: {nope\n\n")).toStrictEqual([
      null,
      null,
    ]);
    expect(events('event: progress\ndata: {"total":-3,"finished":"2","last":7}\n\n')).toStrictEqual(
      [{ type: "progress", progress: progress({ total: 0 }) }],
    );
    // An event with an empty body still counts: `cancelled` needs none.
    expect(events("event: cancelled\ndata:\n\n")).toStrictEqual([
      { type: "cancelled", progress: null },
    ]);
  });

  it("adds events up: running, then ended with the last counts kept", () => {
    let state: LiveState = CONNECTING;
    state = applyExperimentEvent(state, { type: "progress", progress: progress({ finished: 3 }) });
    expect(state).toStrictEqual({
      phase: "running",
      progress: progress({ finished: 3 }),
      detail: null,
    });
    const cancelled = applyExperimentEvent(state, { type: "cancelled", progress: null });
    expect(cancelled).toStrictEqual({ ...state, phase: "cancelled" });
    const stopped = progress({ finished: 4 });
    expect(applyExperimentEvent(state, { type: "cancelled", progress: stopped })).toStrictEqual({
      phase: "cancelled",
      progress: stopped,
      detail: null,
    });
    const done = applyExperimentEvent(state, { type: "done", errors: 0 });
    expect(done).toStrictEqual({ ...state, phase: "done" });
    expect(applyExperimentEvent(state, { type: "done", errors: 2 }).detail).toBe(
      "2 runs could not run; starting the suite again retries them",
    );
    const failed = applyExperimentEvent(CONNECTING, { type: "error", message: "boom" });
    expect(failed).toStrictEqual({ phase: "error", progress: null, detail: "boom" });
    const idle = applyExperimentEvent(CONNECTING, { type: "idle", progress: progress() });
    expect(idle.phase).toBe("idle");
  });
});

describe("an experiment that ended before its page connected", () => {
  it("reads as finished: the store's finished runs against the plan, capped at its total", () => {
    const idle = progress({ total: 0, finished: 8 });
    expect(endedBeforeWatching(idle, { total: 8, skipped: 2 })).toStrictEqual({
      phase: "done",
      progress: { total: 8, skipped: 2, finished: 8, failed: 0, running: 0, last: null },
      detail: null,
    });
    // Older runs of other configurations are in the store's count too: never past the plan.
    expect(
      endedBeforeWatching(progress({ finished: 20 }), { total: 4, skipped: 0 }).progress,
    ).toMatchObject({ total: 4, finished: 4 });
  });
});

describe("the progress bar", () => {
  it("splits the total into finished, failed and running parts that never pass 100%", () => {
    expect(progressShares(progress({ finished: 4, failed: 1, running: 2 }))).toStrictEqual({
      finished: 30,
      failed: 10,
      running: 20,
    });
    // `finished` counts the runs an earlier start finished; more running than left is capped.
    expect(progressShares(progress({ skipped: 5, finished: 10, running: 1 }))).toStrictEqual({
      finished: 100,
      failed: 0,
      running: 0,
    });
    expect(progressShares(progress({ finished: 12, failed: 20 }))).toStrictEqual({
      finished: 0,
      failed: 100,
      running: 0,
    });
    expect(progressShares(progress({ total: 0, finished: 2 }))).toStrictEqual({
      finished: 0,
      failed: 0,
      running: 0,
    });
  });

  it("says where the experiment stands, naming only what is not zero", () => {
    expect(progressSummary(progress())).toBe("0 of 10 runs");
    expect(progressSummary(progress({ finished: 7, failed: 1, running: 2, skipped: 4 }))).toBe(
      "7 of 10 runs · 1 failed to run · 2 running · 4 from an earlier start",
    );
    expect(runsDone(progress({ finished: 12 }))).toBe(10);
  });

  it("tells when more runs ended, so the report is worth reading again", () => {
    expect(progressAdvanced(null, progress())).toBe(true);
    expect(progressAdvanced(progress(), null)).toBe(false);
    expect(progressAdvanced(progress({ finished: 1 }), progress({ finished: 1, running: 3 }))).toBe(
      false,
    );
    expect(progressAdvanced(progress({ finished: 1 }), progress({ finished: 2 }))).toBe(true);
  });
});
