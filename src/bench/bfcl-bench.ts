import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLabProviders } from "../composition/lab-providers.js";
import { bfclSuiteText } from "../experiments/bfcl/bfcl-suite-text.js";
import { importBfcl } from "../experiments/bfcl/import-bfcl.js";
import { runExperiment } from "../experiments/run-experiment.js";
import { parseSuite } from "../experiments/suite.js";
import { SqliteSessionStore } from "../store/sqlite/sqlite-session-store.js";
import { type Figure, median, printFigures } from "./measure.js";

/**
 * `npm run bench -- bfcl`: the BFCL importer on a generated 5,000-case file in BFCL's format
 * (three functions a case, dotted names, float/dict/tuple/any parameters, optional and
 * multi-valued answers), against reading the same lines and `JSON.parse`-ing them, which any
 * importer must do; then `agent-lab bench` runs/s on a suite it imported, on the simulated model
 * (instant: what is measured is the lab), at concurrency 1 and 8.
 */

/** AGENT_LAB_BFCL_CASES makes the file smaller (the smoke test's run); the figures are at 5,000. */
const CASES = Math.max(100, Number.parseInt(process.env.AGENT_LAB_BFCL_CASES ?? "", 10) || 5_000);
const SAMPLES = 3;
/** A fiftieth of the cases, 100 at the default size. */
const BENCH_SCENARIOS = Math.min(100, Math.floor(CASES / 50));

function generatedCase(index: number): { line: string; answer: string } {
  const id = `live_multiple_${index}-${index % 97}-${index % 7}`;
  const doc = (name: string) => ({
    name,
    description: `Function ${name} of case ${index}, which does something useful with its inputs.`,
    parameters: {
      type: "dict",
      required: ["city", "ratio"],
      properties: {
        city: { type: "string", description: "The city, e.g. Berlin." },
        ratio: { type: "float", description: "A ratio between 0 and 1." },
        point: { type: "tuple", items: { type: "float" }, description: "A point." },
        options: {
          type: "dict",
          description: "Options.",
          properties: { depth: { type: "integer", description: "Depth." } },
        },
        tags: { type: "array", items: { type: "string" }, description: "Tags." },
        extra: { type: "any", description: "Anything.", default: null },
      },
    },
  });
  const question = [
    [
      ...(index % 10 === 0 ? [{ role: "system", content: "You are a careful assistant." }] : []),
      { role: "user", content: `Case ${index}: look up Berlin at ratio 0.${index % 10}, please.` },
    ],
  ];
  const line = JSON.stringify({
    id,
    question,
    function: [doc(`geo.lookup_${index % 13}`), doc("weather.get"), doc("calendar_add")],
  });
  const answer = JSON.stringify({
    id,
    ground_truth: [
      {
        [`geo.lookup_${index % 13}`]: {
          city: ["Berlin", "Berlin, Germany"],
          ratio: [index % 10 === 0 ? 0 : (index % 10) / 10],
          extra: [""],
        },
      },
    ],
  });
  return { line, answer };
}

function importFigure(directory: string): { figure: Figure; suiteText: string } {
  const dataFile = join(directory, "BFCL_v4_live_multiple.json");
  const answerFile = join(directory, "possible_answer", "BFCL_v4_live_multiple.json");
  mkdirSync(join(directory, "possible_answer"));
  const cases = Array.from({ length: CASES }, (_, index) => generatedCase(index));
  writeFileSync(dataFile, `${cases.map((entry) => entry.line).join("\n")}\n`);
  writeFileSync(answerFile, `${cases.map((entry) => entry.answer).join("\n")}\n`);

  const baseline = () => {
    let parsed = 0;
    for (const file of [dataFile, answerFile]) {
      for (const line of readFileSync(file, "utf8").split("\n")) {
        if (line !== "") parsed += JSON.parse(line) === null ? 0 : 1;
      }
    }
    return parsed;
  };
  let suiteText = "";
  const importing = () => {
    const result = importBfcl([dataFile]);
    if (result.suite === null || result.summary.total !== CASES) {
      throw new Error(`bfcl bench: imported ${result.summary.total} of ${CASES} cases`);
    }
    suiteText = bfclSuiteText(result.suite, result.summary);
  };
  // Alternated, so the machine's drift falls on both alike.
  const baselineTimes: number[] = [];
  const importTimes: number[] = [];
  for (let sample = 0; sample <= SAMPLES; sample++) {
    let start = performance.now();
    baseline();
    const baselineMs = performance.now() - start;
    start = performance.now();
    importing();
    const importMs = performance.now() - start;
    if (sample === 0) continue; // warm-up
    baselineTimes.push(baselineMs);
    importTimes.push(importMs);
  }
  const importMs = median(importTimes);
  const baselineMs = median(baselineTimes);
  const rate = (ms: number) => `${Math.round((CASES / ms) * 1000).toLocaleString("en")} cases/s`;
  return {
    suiteText,
    figure: {
      name: `import a ${CASES.toLocaleString("en")}-case BFCL file (cases, answers, suite YAML text)`,
      value: `${rate(importMs)} (${Math.round(importMs)} ms)`,
      baseline: `${rate(baselineMs)} reading + JSON.parse of the same lines (${Math.round(baselineMs)} ms)`,
      ratio: importMs / baselineMs,
      target: "import ≥ 2,000 cases/s",
      met: (CASES / importMs) * 1000 >= 2_000,
    },
  };
}

async function runsPerSecond(directory: string, suiteText: string, concurrency: number) {
  const full = parseSuite(suiteText, "bfcl.yaml");
  const suite = { ...full, scenarios: full.scenarios.slice(0, BENCH_SCENARIOS) };
  const store = new SqliteSessionStore(join(directory, `bench-${concurrency}.sqlite3`));
  const providers = createLabProviders();
  try {
    const start = performance.now();
    const outcome = await runExperiment({
      store,
      suite,
      providers,
      concurrency,
      repetitions: 1,
      keep_runs: false,
    });
    const seconds = (performance.now() - start) / 1000;
    if (outcome.errors.length > 0) {
      throw new Error(
        `bfcl bench: ${outcome.errors.length} runs failed: ${outcome.errors[0]?.message}`,
      );
    }
    return { runs: outcome.total, perSecond: outcome.total / seconds };
  } finally {
    await providers.tools.close();
    store.close();
  }
}

export async function runBfclBench(): Promise<Figure[]> {
  const directory = mkdtempSync(join(tmpdir(), "agent-lab-bfcl-bench-"));
  try {
    const { figure, suiteText } = importFigure(directory);
    const one = await runsPerSecond(directory, suiteText, 1);
    const eight = await runsPerSecond(directory, suiteText, 8);
    const figures: Figure[] = [
      figure,
      {
        name: `agent-lab bench on ${BENCH_SCENARIOS} imported scenarios × 2 modes, sim model, concurrency 8`,
        value: `${eight.perSecond.toFixed(1)} runs/s (${eight.runs} runs)`,
        baseline: `${one.perSecond.toFixed(1)} runs/s at concurrency 1`,
        ratio: eight.perSecond / one.perSecond,
        target: "informational (one SQLite writer, a 2-core box)",
        met: true,
      },
    ];
    printFigures("BFCL import and bench", figures);
    return figures;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}
