import { z } from "zod";
import { type JsonObject, json, object, ok, ref } from "./openapi-shapes.js";
import { StartExperimentBody } from "./routes/experiments.js";
import { MAX_SCENARIO_RUNS } from "./scenario-view.js";

/**
 * The OpenAPI part for experiments the server runs: the suites it can start, starting one,
 * watching it (server-sent events), cancelling it, and one scenario compared across cells.
 */

const nullable = (schema: JsonObject): JsonObject => ({ anyOf: [schema, { type: "null" }] });
const integer = { type: "integer" };
const string = { type: "string" };
const boolean = { type: "boolean" };
const error = (description: string) => ({ description, content: json(ref("Error")) });
const common = {
  401: error("the request lacks the server's token (unauthorized)"),
  403: error("a foreign Host header or a cross-origin change (forbidden)"),
  500: error("an unexpected failure, reported with a generic message (internal_error)"),
};

const experimentId = {
  name: "id",
  in: "path",
  required: true,
  description: "the experiment id (the one `agent-lab bench` uses for the same suite)",
  schema: string,
};

export function experimentRunSchemas(): JsonObject {
  return {
    SuiteListing: object({
      name: { ...string, description: "what POST /api/experiments takes as `suite`" },
      file: { ...string, description: "where the server read it (bundled or a configured folder)" },
      description: nullable(string),
      scenarios: integer,
      categories: { type: "array", items: string },
      cells: { type: "array", items: object({ id: string, label: string }) },
      repetitions: { ...integer, description: "the suite's default" },
      concurrency: { ...integer, description: "the suite's default" },
    }),
    StartExperimentBody: z.toJSONSchema(StartExperimentBody, { io: "input" }),
    ExperimentRunProgress: object({
      total: { ...integer, description: "planned runs: cells × scenarios × repetitions" },
      skipped: { ...integer, description: "runs already complete in the store at the start" },
      finished: { ...integer, description: "planned runs finished, skipped ones included" },
      failed: {
        ...integer,
        description: "finished runs with a failed turn, or that could not run",
      },
      running: { ...integer, description: "runs in flight" },
      last: nullable(
        object({
          run_key: string,
          success: { ...boolean, description: "the finished run's scored verdict" },
        }),
      ),
    }),
    ScenarioRun: object({
      session_id: string,
      repetition: integer,
      success: boolean,
      failures: { type: "array", items: string },
      answer: { ...string, description: "the last turn's final answer" },
      tool_calls: {
        type: "array",
        items: object({
          turn: integer,
          name: string,
          arguments: { type: "object" },
          ok: nullable(boolean),
        }),
      },
    }),
    ScenarioComparison: object({
      experiment_id: string,
      scenario: string,
      category: string,
      cells: {
        type: "array",
        items: object({
          cell: string,
          label: string,
          runs_total: { ...integer, description: "finished runs of the scenario in the cell" },
          successes_total: { ...integer, description: "of those, the runs that passed (all)" },
          incomplete: { ...integer, description: "its runs not finished (running, cancelled)" },
          runs: {
            type: "array",
            maxItems: MAX_SCENARIO_RUNS,
            items: ref("ScenarioRun"),
            description: `the first ${MAX_SCENARIO_RUNS} repetitions (the cell drill-down pages every run)`,
          },
        }),
      },
    }),
  };
}

const EVENTS = `Server-sent events, each one line of JSON:
- \`progress\` (ExperimentRunProgress): the current state first (a late watcher starts from where it is), then after each finished run; progress that piles up while the client reads is folded into the latest;
- then one of \`done\` \`{outcome: {experiment_id, total, skipped, finished, errors: [{run_key, message}] (at most 20)}}\`, \`cancelled\` (the ExperimentRunProgress at the stop) or \`error\` \`{message}\`, and the stream ends.
An experiment that ended in this server (the latest 32 are kept) replays its final progress and its end. Otherwise, when nothing runs under the id here: one \`idle\` event \`{finished, successes, incomplete}\` (the store's counts), then the end. Watching changes nothing: a client that leaves does not stop the experiment.`;

export function experimentRunPaths(): JsonObject {
  return {
    "/api/suites": {
      get: {
        operationId: "listSuites",
        summary: "The suite files experiments can be started from",
        description:
          "The bundled suites, then the `*.yaml` files of the folders the server's owner configured (`suites_dirs` in the lab config file, `agent-lab serve --suites DIR`), read on each request. A file that does not parse is listed under `invalid` with its problems (file:line:col); of two suites with one name the first wins.",
        responses: {
          200: ok(
            "the suites",
            object({
              suites: { type: "array", items: ref("SuiteListing") },
              invalid: { type: "array", items: object({ file: string, error: string }) },
            }),
          ),
          ...common,
        },
      },
    },
    "/api/experiments/{id}/events": {
      parameters: [experimentId],
      get: {
        operationId: "watchExperiment",
        summary: "A running experiment's progress, as server-sent events",
        description: EVENTS,
        responses: {
          200: {
            description: "the event stream",
            content: { "text/event-stream": { schema: string } },
          },
          404: error("nothing runs under this id and no session carries it (not_found)"),
          ...common,
        },
      },
    },
    "/api/experiments/{id}/cancel": {
      parameters: [experimentId],
      post: {
        operationId: "cancelExperiment",
        summary: "Stops a running experiment",
        description:
          "No run starts after this; the running ones are cancelled (stored as cancelled, so a later start runs them again). What finished is kept. The watchers get `cancelled`. Like every POST it must be sent as application/json (the body, `{}`, is ignored).",
        requestBody: { required: false, content: json({ type: "object" }) },
        responses: {
          202: ok("stopping", object({ experiment_id: string, cancelling: { const: true } })),
          404: error("nothing runs under this id in this server (not_found)"),
          415: error("not sent as application/json (unsupported_media_type)"),
          ...common,
        },
      },
    },
    "/api/experiments/{id}/scenarios": {
      parameters: [experimentId],
      get: {
        operationId: "listScenarios",
        summary: "Every scenario the experiment has a run of",
        description:
          "From every run of the report (finished or not), each scenario once, by category then id: what a scenario picker offers. Served from the same cache as the report.",
        responses: {
          200: ok(
            "the scenarios",
            object({
              experiment_id: string,
              scenarios: {
                type: "array",
                items: object({ scenario: string, category: string }),
              },
            }),
          ),
          404: error("no such experiment (not_found)"),
          ...common,
        },
      },
    },
    "/api/experiments/{id}/scenarios/{scenario}": {
      parameters: [
        experimentId,
        {
          name: "scenario",
          in: "path",
          required: true,
          description: "the scenario id",
          schema: string,
        },
      ],
      get: {
        operationId: "compareScenario",
        summary: "One scenario's runs side by side, per cell",
        description: `For each cell of the report (its order), the scenario's finished runs by repetition: final answer, tool calls with their arguments, verdict and failing checks. Bounded: at most ${MAX_SCENARIO_RUNS} runs per cell (runs_total says how many there are). Served from the same cache as the report.`,
        responses: {
          200: ok("the comparison", ref("ScenarioComparison")),
          404: error("no such experiment, or no run of that scenario in it (not_found)"),
          ...common,
        },
      },
    },
  };
}

/** `POST /api/experiments`, merged into the path item the list already has. */
export const startExperimentOperation: JsonObject = {
  operationId: "startExperiment",
  summary: "Starts a suite the server knows, in the server process",
  description:
    "The same runner and experiment id as `agent-lab bench` with that suite file: runs already complete in the store (from either face) are skipped, so starting again resumes. `cells` runs only those cells (each exactly as the whole suite makes it). Answers once the plan is known and the cells checked; watch `events_url`. One run of an experiment at a time per server.",
  requestBody: { required: true, content: json(ref("StartExperimentBody")) },
  responses: {
    202: ok(
      "started",
      object({
        experiment_id: string,
        total: integer,
        skipped: integer,
        events_url: { ...string, description: "GET it for the progress (server-sent events)" },
      }),
    ),
    400: error("a bad field, named (e.g. request body: cells.0: …), or a cell that cannot run"),
    404: error("no suite of that name among GET /api/suites (not_found)"),
    409: error("this experiment is already running in this server (experiment_running)"),
    413: error("the body is larger than the limit (payload_too_large)"),
    415: error("the body is not application/json (unsupported_media_type)"),
    ...common,
  },
};
