import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLabProviders } from "../composition/lab-providers.js";
import { runTurn } from "../composition/run-turn.js";
import { observeTurns } from "../runtime/turn-observers.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { spansObserver } from "../telemetry/live-export.js";
import { createOtelPipeline } from "../telemetry/otel-pipeline.js";
import { type Figure, mean, printFigures } from "./measure.js";

/**
 * What live OpenTelemetry export costs a turn: the same dual_agent turn with one tool (sim model,
 * instant) with export off and on, alternated in one run, the export going over OTLP/HTTP to a
 * collector on loopback. The "on" side pays reading the turn back, building its spans and, spread
 * over the turns, the final flush of what the batch processor still held.
 */

const TURNS = 200;
const WARM_UP = 20;
/** A long session: the export must not read the whole session again at every turn. */
const LONG_SESSION_TURNS = 240;
/** The last turns of it that are timed, half with export on. */
const LATE_TURNS = 120;

async function drain(events: AsyncIterable<unknown>): Promise<void> {
  for await (const _event of events) {
    // the turn's events are not the point here
  }
}

/** A collector that takes every request (and counts the bytes). */
async function startSink(): Promise<{ url: string; bytes: () => number; close(): Promise<void> }> {
  let bytes = 0;
  const server = createServer((request, response) => {
    request.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    request.on("end", () =>
      response.writeHead(200, { "content-type": "application/json" }).end("{}"),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bytes: () => bytes,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

export async function runOtelBench(): Promise<Figure[]> {
  const folder = mkdtempSync(join(tmpdir(), "agent-lab-otel-bench-"));
  const sink = await startSink();
  const saved = {
    endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT,
    timeout: process.env.OTEL_EXPORTER_OTLP_TIMEOUT,
  };
  // The SDK's exporter reads its endpoint from the environment, as it does in the lab. Its
  // timeout too: the lab's 3 s default keeps a command from waiting on a collector that is down,
  // but this one is up and the figure is the cost per turn, which a batch cut short on a busy
  // machine (the test suite's workers beside it) would only turn into a failed run.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = sink.url;
  process.env.OTEL_EXPORTER_OTLP_TIMEOUT = "30000";
  const store = new SqliteSessionStore(join(folder, "lab.sqlite3"));
  try {
    const pipeline = createOtelPipeline(process.env, { version: "bench" });
    const observer = spansObserver(pipeline.tracer, { content: false });
    // Built once, as a lab process builds its own: a turn given none builds the tools anew, an
    // equal cost on both sides that would pull the ratio toward 1.
    const providers = createLabProviders();
    const timeTurn = async (session_id: string, message: string, exported: boolean) => {
      const stop = exported ? observeTurns(observer) : () => {};
      const start = performance.now();
      await drain(runTurn({ store, session_id, message, providers }));
      const took = performance.now() - start;
      stop();
      return took;
    };
    const off: number[] = [];
    const on: number[] = [];
    for (let turn = 0; turn < TURNS + WARM_UP; turn++) {
      // A fresh session per turn on both sides; the order alternates so drift hits both.
      const message = `search for otel bench ${turn}`;
      const first = turn % 2 === 0;
      const a = await timeTurn(store.createSession({ title: "b", config: {} }), message, first);
      const b = await timeTurn(store.createSession({ title: "b", config: {} }), message, !first);
      if (turn < WARM_UP) continue;
      (first ? on : off).push(a);
      (first ? off : on).push(b);
    }
    const flushStart = performance.now();
    await pipeline.flush(30_000);
    // On the timed turns only: the spans still queued are the last turns', all of them timed.
    const flushPerTurn = (performance.now() - flushStart) / TURNS;
    // Means, not medians: a batch of spans is serialised inside whichever turn fills it, and a
    // median left those turns out.
    const offMs = mean(off);
    const onMs = mean(on) + flushPerTurn;

    // The same measure late in one long session: the reader's cost grows with the session.
    const long = store.createSession({ title: "long", config: {} });
    const lateOff: number[] = [];
    const lateOn: number[] = [];
    for (let turn = 0; turn < LONG_SESSION_TURNS; turn++) {
      const exported = turn % 2 === 1;
      const took = await timeTurn(long, `search for long session ${turn}`, exported);
      if (turn >= LONG_SESSION_TURNS - LATE_TURNS) (exported ? lateOn : lateOff).push(took);
    }
    // The spans still queued go out now: the last exported turns', which are the timed ones, so
    // the flush is shared among those.
    const lateFlushStart = performance.now();
    await pipeline.flush(30_000);
    const lateFlushPerTurn = (performance.now() - lateFlushStart) / lateOn.length;
    await pipeline.shutdown(30_000);
    const lateOffMs = mean(lateOff);
    const lateOnMs = mean(lateOn) + lateFlushPerTurn;
    if (pipeline.stats.failed > 0 || pipeline.stats.exported === 0) {
      throw new Error(`the export failed: ${JSON.stringify(pipeline.stats)}`);
    }
    console.log(
      `  a dual_agent turn with one tool (sim model, instant), mean of ${TURNS} each, alternated:\n` +
        `    export off ${offMs.toFixed(2)} ms; on ${onMs.toFixed(2)} ms (flush ${flushPerTurn.toFixed(3)} ms/turn included); ` +
        `${pipeline.stats.exported} spans, ${(sink.bytes() / 1024).toFixed(0)} KiB sent\n` +
        `    turns ${LONG_SESSION_TURNS - LATE_TURNS + 1}-${LONG_SESSION_TURNS} of one session: off ${lateOffMs.toFixed(2)} ms; on ${lateOnMs.toFixed(2)} ms (flush ${lateFlushPerTurn.toFixed(3)} ms/turn included)`,
    );
    const figures: Figure[] = [
      {
        name: `a turn with OpenTelemetry export on against off (sim model instant, OTLP/HTTP to loopback, mean of ${TURNS}, the export's flush included)`,
        value: `${onMs.toFixed(2)} ms`,
        baseline: `${offMs.toFixed(2)} ms (export off)`,
        ratio: onMs / offMs,
        // Reading the turn back (a first sight of the session pages it from the start) and its
        // spans: a fixed cost per turn, whatever the turn's own length.
        target: "<= 1.3x",
        met: onMs / offMs <= 1.3,
      },
      {
        name: `the same late in a ${LONG_SESSION_TURNS}-turn session (the rows are read from where the last turn's read ended)`,
        value: `${lateOnMs.toFixed(2)} ms`,
        baseline: `${lateOffMs.toFixed(2)} ms (export off)`,
        ratio: lateOnMs / lateOffMs,
        target: "<= 1.3x",
        met: lateOnMs / lateOffMs <= 1.3,
      },
    ];
    printFigures("OpenTelemetry export (npm run bench -- otel)", figures);
    return figures;
  } finally {
    store.close();
    await sink.close();
    for (const [name, value] of [
      ["OTEL_EXPORTER_OTLP_ENDPOINT", saved.endpoint],
      ["OTEL_EXPORTER_OTLP_TIMEOUT", saved.timeout],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(folder, { recursive: true, force: true });
  }
}
