import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLabProviders } from "../composition/lab-providers.js";
import { runTurn } from "../composition/run-turn.js";
import {
  LabSessionConfig,
  type LabSessionConfigInput,
  type ToolInvocationMode,
} from "../domain/session-config.js";
import { SimChatModel } from "../providers/sim/sim-chat-model.js";
import type { TurnProviders } from "../runtime/turn-providers.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import { HandWrittenLoop } from "./hand-written-loop.js";
import { countFromEnv, type Figure, median, printFigures } from "./measure.js";
import { type CallSpan, ScriptedToolModel, TimedModel } from "./scripted-model.js";

const MODES: ToolInvocationMode[] = ["chat_agent_tools", "dual_agent"];

/**
 * The lab's own cost per round: turns of two rounds (a tool round and an answer) on the instant
 * sim model and instant tools, everything persisted to a real file. The time spent inside the
 * model's stream is measured and subtracted: what remains is orchestration, validation, tool
 * dispatch and the store.
 */
async function costPerRound(
  store: SqliteSessionStore,
  mode: ToolInvocationMode,
  payloads: "on" | "off",
): Promise<Figure> {
  const chat = new TimedModel(new SimChatModel({}));
  const event = new TimedModel(new SimChatModel({}));
  // Built once, as a server builds its own: a turn given none builds the tools anew.
  const providers = createLabProviders();
  const overheads: number[] = [];
  const walls: number[] = [];
  for (let turn = 0; turn < 120; turn++) {
    const before = chat.spent_ms + event.spent_ms;
    const start = performance.now();
    let rounds = 0;
    for await (const turnEvent of runTurn({
      store,
      message: `search for round cost ${turn}`,
      config: { tool_invocation_mode: mode, capture: { payloads } },
      models: { chat, event },
      providers,
    })) {
      if (turnEvent.type === "round_end") rounds++;
    }
    const wall = performance.now() - start;
    const inModel = chat.spent_ms + event.spent_ms - before;
    if (turn < 20) continue; // warm-up
    walls.push(wall / rounds);
    overheads.push((wall - inModel) / rounds);
  }
  const overhead = median(overheads);
  const wall = median(walls);
  return {
    name: `lab cost per round, ${mode}, payload capture ${payloads} (sim model and tools at zero latency, all persisted; median of 100 turns)`,
    value: `${overhead.toFixed(3)} ms of the lab per round`,
    baseline: `${wall.toFixed(3)} ms per round including the sim model's own work (tokenizer)`,
    ratio: overhead / wall,
    target: "<= 1 ms per round",
    met: overhead <= 1,
  };
}

async function earlyDispatch(store: SqliteSessionStore): Promise<Figure> {
  const walls: Record<string, number[]> = { chat_agent_tools: [], dual_agent: [] };
  for (let run = 0; run < 3; run++) {
    for (const mode of MODES) {
      const model = new ScriptedToolModel(300);
      for await (const turnEvent of runTurn({
        store,
        message: "search for early dispatch",
        config: { tool_invocation_mode: mode, tools: ["mock_search"] },
        models: { chat: model, event: model },
        tools: createBuiltinTools({ latency_ms: 300 }),
      })) {
        if (turnEvent.type === "turn_end") walls[mode]?.push(turnEvent.wall_time_ms);
      }
    }
  }
  const native = median(walls.chat_agent_tools ?? []);
  const dual = median(walls.dual_agent ?? []);
  console.log(
    `\n  early dispatch: a 300 ms tool, and 300 ms more text streamed after the request\n` +
      `    chat_agent_tools (tool starts when the stream ends): turn wall time ${native.toFixed(0)} ms\n` +
      `    dual_agent (tool starts when its tag closes):        turn wall time ${dual.toFixed(0)} ms\n` +
      `    ratio dual/native ${(dual / native).toFixed(2)}`,
  );
  return {
    name: "early dispatch: dual_agent turn wall time against chat_agent_tools, same script (median of 3)",
    value: `${dual.toFixed(0)} ms`,
    baseline: `${native.toFixed(0)} ms (chat_agent_tools)`,
    ratio: dual / native,
    target: "dual_agent faster (ratio < 1)",
    met: dual < native,
  };
}

/**
 * What payload capture costs in storage: the same sim conversations (two rounds a turn, both modes)
 * recorded into two fresh files, capture on and off, each file's size per 1,000 model calls once
 * closed (its WAL checkpointed). The payloads' own compression is reported beside it.
 */
async function captureStorage(directory: string): Promise<Figure> {
  const TURNS = 250;
  const sizes: Record<"on" | "off", number> = { on: 0, off: 0 };
  let calls = 0;
  let raw = 0;
  let stored = 0;
  for (const payloads of ["on", "off"] as const) {
    const path = join(directory, `capture-${payloads}.sqlite3`);
    const store = new SqliteSessionStore(path);
    calls = 0;
    try {
      for (let turn = 0; turn < TURNS; turn++) {
        const mode = MODES[turn % MODES.length] as ToolInvocationMode;
        const session_id = `s${turn % 25}-${mode}`;
        const keys: string[] = [];
        for await (const event of runTurn({
          store,
          session_id,
          message: `search for capture cost ${turn}`,
          config: { tool_invocation_mode: mode, capture: { payloads } },
        })) {
          if (event.type !== "usage" || event.call_kind === "tool_execution") continue;
          calls++;
          keys.push(event.metric_key);
        }
        // A round's payloads are written with the round's record, so they are read after the turn.
        for (const key of payloads === "on" ? keys : []) {
          const payload = store.getCallPayload(session_id, key);
          raw += (payload?.request_bytes ?? 0) + (payload?.response_bytes ?? 0);
          stored += payload?.stored_bytes ?? 0;
        }
      }
    } finally {
      store.close();
    }
    sizes[payloads] = statSync(path).size;
  }
  const perThousand = (bytes: number) => (bytes / calls) * 1000;
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`;
  const compression = raw / Math.max(1, stored);
  return {
    name: `storage per 1,000 model calls, payload capture on against off (sim, ${calls} calls each, growing sessions)`,
    value: `${mib(perThousand(sizes.on))} with payloads (stored compressed ${compression.toFixed(1)}x smaller than their ${mib(perThousand(raw))} raw)`,
    baseline: `${mib(perThousand(sizes.off))} without`,
    ratio: sizes.on / sizes.off,
    target: "payloads stored at most 1/3 of their raw size",
    met: compression >= 3,
  };
}

/** Turns in the long session of `perTurnCurve` (AGENT_LAB_BENCH_TURNS for a longer one). */
const LONG_SESSION_TURNS = countFromEnv("AGENT_LAB_BENCH_TURNS", 1_000, 100);

/** The config of the sessions whose turns are timed: native tools, no payloads kept. */
const LAB_CONFIG = {
  tool_invocation_mode: "chat_agent_tools",
  capture: { payloads: "off" },
} as const satisfies LabSessionConfigInput;

/** What a lab process builds once and its sessions share: the model and the providers. */
interface LabShared {
  chat: TimedModel;
  providers: TurnProviders;
}

const labShared = (): LabShared => ({
  chat: new TimedModel(new SimChatModel({})),
  providers: createLabProviders(),
});

/**
 * Where a turn's own time went, in ms: before its first model call, between its calls, after its
 * last, and inside the calls' streams between their parts (the model's own time left out).
 */
interface TurnSegments {
  before: number;
  between: number;
  after: number;
  in_streams: number;
}

/** A turn's own time (`model`'s subtracted), its rounds (what `run` returns), and its segments. */
interface TurnTime {
  ms: number;
  rounds: number;
  segments: TurnSegments;
}

async function ownTime(model: TimedModel, run: () => Promise<number>): Promise<TurnTime> {
  model.takeSpans();
  const before = model.spent_ms;
  const start = performance.now();
  const rounds = await run();
  const end = performance.now();
  return {
    ms: end - start - (model.spent_ms - before),
    rounds,
    segments: segmentsOf(start, end, model.takeSpans()),
  };
}

function segmentsOf(start: number, end: number, spans: readonly CallSpan[]): TurnSegments {
  const first = spans[0];
  const last = spans.at(-1);
  if (first === undefined || last === undefined) {
    return { before: end - start, between: 0, after: 0, in_streams: 0 };
  }
  let between = 0;
  let in_streams = 0;
  spans.forEach((span, index) => {
    in_streams += span.end - span.start - span.model_ms;
    const previous = spans[index - 1];
    if (previous !== undefined) between += span.start - previous.end;
  });
  return { before: first.start - start, between, after: end - last.end, in_streams };
}

/** A lab session's next turn, each call: its own time, model time subtracted (`ownTime`). */
function labSession(
  store: SqliteSessionStore,
  session_id: string,
  // Built once, as a server or CLI session builds them (the hand-written loop's tools are too).
  { chat, providers }: LabShared = labShared(),
): () => Promise<TurnTime> {
  let turn = 0;
  return () =>
    ownTime(chat, async () => {
      let rounds = 0;
      for await (const event of runTurn({
        store,
        session_id,
        message: `search for round cost ${turn++}`,
        config: LAB_CONFIG,
        models: { chat, event: chat },
        providers,
      })) {
        if (event.type === "round_end") rounds++;
      }
      return rounds;
    });
}

/**
 * Turns of warm-up before `labAgainstLoop` measures (AGENT_LAB_BENCH_WARMUP for another count):
 * V8 compiles the lab's code, far more of it than the loop's, over its first thousand-odd turns,
 * and a lab serves turns for hours. Measured right away, the lab's figure is partly its compiler.
 */
const WARMUP_TURNS = countFromEnv("AGENT_LAB_BENCH_WARMUP", 1_500, 0);

/** Turns measured on each side of `labAgainstLoop` (AGENT_LAB_BENCH_ROUND_TURNS for another count). */
const MEASURED_TURNS = countFromEnv("AGENT_LAB_BENCH_ROUND_TURNS", 1_000, 10);

/**
 * The lab against a hand-written loop doing the same model calls, tool calls and rows with one
 * transaction per round (hand-written-loop.ts), in steady state: both first run WARMUP_TURNS
 * turns on sessions of 100 turns that are then left alone, then MEASURED_TURNS turns each on
 * sessions of 100, turns alternating and their order swapped every turn (a busy machine slows
 * both alike), the model's own time subtracted from both: what the lab's validation, events and
 * bookkeeping cost per round over the floor. Each writes its own file, as a lab is its file's one
 * writer: on a shared file every commit of one would empty the other's page cache, a cost neither
 * has in use.
 *
 * The cost per round is the total over the measured turns divided by their rounds. About one turn
 * in fifteen runs a WAL checkpoint and costs five to eight times a plain one: a third of what
 * either side costs, which a median of turns leaves out. The median is printed beside the figure:
 * it compares the two without the cost of writing their pages to the database. Each side's
 * sessions are made before they are timed, and each keeps its model, tools and connection across
 * them.
 */
export async function labAgainstLoop(
  directory: string,
  { checked = false }: { checked?: boolean } = {},
): Promise<Figure> {
  const SESSION_TURNS = 100;
  const suffix = checked ? "-checked" : "";
  const store = new SqliteSessionStore(join(directory, `lab${suffix}.sqlite3`));
  const loopPath = join(directory, `loop${suffix}.sqlite3`);
  // The loop writes with its own statements into the lab's schema.
  new SqliteSessionStore(loopPath).close();
  const model = new TimedModel(new SimChatModel({}));
  // The lab's model and providers, like the loop's, serve every session.
  const shared = labShared();
  const config = LabSessionConfig.parse(LAB_CONFIG);
  /** A lab session made before it is timed, as the loop's is by `startSession`. */
  const labSessionMade = async (sessionId: string) => {
    await store.ensureSession(sessionId, { title: "lab", config });
    return labSession(store, sessionId, shared);
  };
  // One connection for every session, as one lab process keeps its store open. Its session rows
  // are the lab's: its title, and its config as the store writes it (hand-written-loop.test.ts).
  const loop = new HandWrittenLoop(loopPath, model, {
    checked,
    session: { title: "lab", config_json: JSON.stringify(config) },
  });
  /** One turn of the loop: its own time, model time subtracted (`ownTime`). */
  const loopTurn = (turn: number) =>
    ownTime(model, () => loop.turn(`search for round cost ${turn}`));
  try {
    const coldStarted = performance.now();
    for (let turn = 0; turn < WARMUP_TURNS; turn += SESSION_TURNS) {
      // Conversations of their own: the sim keeps its memos per conversation id.
      loop.startSession(`warm-up-loop-${turn}`);
      const lab = await labSessionMade(`warm-up-lab-${turn}`);
      for (let at = turn; at < Math.min(turn + SESSION_TURNS, WARMUP_TURNS); at++) {
        await loopTurn(at);
        await lab();
      }
    }
    const warmUpSeconds = (performance.now() - coldStarted) / 1000;
    const loopTurns = new TurnCosts();
    const labTurns = new TurnCosts();
    for (let turn = 0; turn < MEASURED_TURNS; turn += SESSION_TURNS) {
      loop.startSession(`loop-${turn}`);
      const lab = await labSessionMade(`lab-${turn}`);
      for (let at = turn; at < Math.min(turn + SESSION_TURNS, MEASURED_TURNS); at++) {
        if (at % 2 === 0) {
          loopTurns.add(await loopTurn(at));
          labTurns.add(await lab());
        } else {
          labTurns.add(await lab());
          loopTurns.add(await loopTurn(at));
        }
      }
    }
    printSegments(labTurns, loopTurns, checked ? "checked loop" : "loop");
    const labMs = labTurns.perRound();
    const loopMs = loopTurns.perRound();
    const labMedian = labTurns.medianPerRound();
    const loopMedian = loopTurns.medianPerRound();
    if (checked) {
      return {
        name: `lab cost per round against the same loop with the lab store's input checks and row builders on each transaction's rows (informational, no target: what the lab costs beyond checking what it stores; ${WARMUP_TURNS} warm-up turns each, ${MEASURED_TURNS} turns each, alternating)`,
        value: `${labMs.toFixed(3)} ms per round (median turn ${labMedian.toFixed(3)} ms)`,
        baseline: `${loopMs.toFixed(3)} ms per round, the checked loop (median turn ${loopMedian.toFixed(3)} ms; medians' ratio ${(labMedian / loopMedian).toFixed(2)}x)`,
        ratio: labMs / loopMs,
        target: "none: informational",
        met: true,
      };
    }
    return {
      name: `lab cost per round against a hand-written loop (same calls and rows, one transaction per round; chat_agent_tools, sim model and tools at zero latency, each on its own file; after ${WARMUP_TURNS} warm-up turns each (${warmUpSeconds.toFixed(1)} s), ${MEASURED_TURNS} turns each on sessions of ${SESSION_TURNS}, alternating; all their time over all their rounds, WAL checkpoints included)`,
      value: `${labMs.toFixed(3)} ms per round (median turn ${labMedian.toFixed(3)} ms, ${labTurns.checkpointLike()} turns over 2x it)`,
      baseline: `${loopMs.toFixed(3)} ms per round, hand-written loop (median turn ${loopMedian.toFixed(3)} ms, ${loopTurns.checkpointLike()} turns over 2x it; medians' ratio ${(labMedian / loopMedian).toFixed(2)}x)`,
      ratio: labMs / loopMs,
      target: "<= 1.3x",
      met: labMs / loopMs <= 1.3,
    };
  } finally {
    loop.close();
    store.close();
  }
}

/** Where the lab's time beyond the loop's goes in a turn: each segment's median, side by side. */
function printSegments(lab: TurnCosts, loop: TurnCosts, loopName: string): void {
  const SEGMENTS: [keyof TurnSegments, string][] = [
    ["before", "before the first model call (session, claim, history, request)"],
    ["between", "between the two calls (the call's record, the tool, the round's commit)"],
    ["after", "after the last call (its record, the last round's and the turn's commit)"],
    ["in_streams", "inside the streams, between their parts"],
  ];
  console.log(
    `\n  a turn's own time by segment, lab against ${loopName} (medians of the measured turns, µs):`,
  );
  for (const [segment, what] of SEGMENTS) {
    const labUs = lab.segmentMedian(segment);
    const loopUs = loop.segmentMedian(segment);
    const excess = (labUs - loopUs).toFixed(0);
    console.log(
      `    ${what.padEnd(76)} lab ${labUs.toFixed(0).padStart(5)}  loop ${loopUs.toFixed(0).padStart(5)}  (${excess.startsWith("-") ? "" : "+"}${excess})`,
    );
  }
}

/** The measured turns of one side: their own time and rounds. */
class TurnCosts {
  readonly #perRound: number[] = [];
  readonly #segments: TurnSegments[] = [];
  #ms = 0;
  #rounds = 0;

  add({ ms, rounds, segments }: TurnTime): void {
    this.#perRound.push(ms / rounds);
    this.#segments.push(segments);
    this.#ms += ms;
    this.#rounds += rounds;
  }

  /** The median turn's time in one segment, in µs. */
  segmentMedian(segment: keyof TurnSegments): number {
    return 1000 * median(this.#segments.map((segments) => segments[segment]));
  }

  perRound(): number {
    return this.#ms / this.#rounds;
  }

  medianPerRound(): number {
    return median(this.#perRound);
  }

  /** Turns that cost over twice the median: those that ran a WAL checkpoint, nearly all. */
  checkpointLike(): number {
    const typical = this.medianPerRound();
    return this.#perRound.filter((cost) => cost > 2 * typical).length;
  }
}

/**
 * The lab's own cost per turn along one long session: a turn late in the session must cost what
 * an early one does (its history is kept, its roll-up is its own calls). Around turn 10, 100 and
 * the last, each of 11 turns of the long session alternates with a turn of a short session (its
 * 10th-20th turn), so the ratio holds on a busy machine; the turn-10 cost is printed as measured.
 */
async function perTurnCurve(directory: string): Promise<Figure> {
  const store = new SqliteSessionStore(join(directory, "long.sqlite3"));
  try {
    const long = labSession(store, "long");
    let shortSessions = 0;
    let short = labSession(store, "short-0");
    let shortTurns = 0;
    /** A turn of a session with 9 to 19 turns behind it. */
    const shortTurn = async () => {
      if (shortTurns >= 20) {
        short = labSession(store, `short-${++shortSessions}`);
        shortTurns = 0;
      }
      for (; shortTurns < 9; shortTurns++) await short();
      shortTurns++;
      return (await short()).ms;
    };
    // A session of 100 turns (the smallest) has its last point at 100 already.
    const points = [...new Set([10, 100, LONG_SESSION_TURNS])];
    const longCosts = new Map(points.map((point) => [point, [] as number[]]));
    const shortCosts = new Map(points.map((point) => [point, [] as number[]]));
    for (let turn = 1; turn <= LONG_SESSION_TURNS; turn++) {
      // 11 turns around each point; the last point's are the session's last 11.
      const point = points.find((p) =>
        p === LONG_SESSION_TURNS ? turn > p - 11 : turn >= p - 5 && turn <= p + 5,
      );
      if (point === undefined) {
        await long();
        continue;
      }
      // Which of the pair runs first alternates: a turn run right after the other pays for the
      // caches the other left behind.
      let longMs: number;
      let shortMs: number;
      if (turn % 2 === 0) {
        longMs = (await long()).ms;
        shortMs = await shortTurn();
      } else {
        shortMs = await shortTurn();
        longMs = (await long()).ms;
      }
      longCosts.get(point)?.push(longMs);
      shortCosts.get(point)?.push(shortMs);
    }
    const at = (costs: Map<number, number[]>, point: number) => median(costs.get(point) ?? []);
    console.log(
      `\n  lab cost per turn along one session (chat_agent_tools, sim, two rounds a turn), against a 10-20-turn session at the same time:\n${points
        .map(
          (point) =>
            `    turn ${String(point).padStart(5)}: ${at(longCosts, point).toFixed(3)} ms  (short session ${at(shortCosts, point).toFixed(3)} ms)`,
        )
        .join("\n")}`,
    );
    const last = at(longCosts, LONG_SESSION_TURNS);
    const reference = at(shortCosts, LONG_SESSION_TURNS);
    return {
      name: `lab cost per turn at turn ${LONG_SESSION_TURNS} of one session against a turn 10-20 of a short one, alternating (median of 11; AGENT_LAB_BENCH_TURNS for a longer session)`,
      value: `${last.toFixed(3)} ms at turn ${LONG_SESSION_TURNS}`,
      baseline: `${reference.toFixed(3)} ms at turn 10-20 (turn 10 of the long session: ${at(longCosts, 10).toFixed(3)} ms)`,
      ratio: last / reference,
      target: "<= 1.5x",
      met: last / reference <= 1.5,
    };
  } finally {
    store.close();
  }
}

export async function runRuntimeBench(): Promise<Figure[]> {
  const directory = mkdtempSync(join(tmpdir(), "agent-lab-bench-"));
  const store = new SqliteSessionStore(join(directory, "runtime.sqlite3"));
  try {
    console.log("\nruntime benchmark");
    const figures: Figure[] = [];
    // Capture is on by default for the sim (its payloads are compressed and stored every call).
    for (const payloads of ["on", "off"] as const) {
      for (const mode of MODES) figures.push(await costPerRound(store, mode, payloads));
    }
    figures.push(await labAgainstLoop(directory));
    figures.push(await perTurnCurve(directory));
    figures.push(await earlyDispatch(store));
    figures.push(await captureStorage(directory));
    // Last: the checked loop calls the store's checks with objects of its own making, which may
    // leave V8's code for them slower for whatever the lab runs after it.
    figures.push(await labAgainstLoop(directory, { checked: true }));
    printFigures("Runtime", figures);
    return figures;
  } finally {
    store.close();
    rmSync(directory, { recursive: true, force: true });
  }
}
