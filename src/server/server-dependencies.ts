import type { LabProviders } from "../composition/lab-providers.js";
import type { Environment } from "../domain/env-references.js";
import type { LabConfigFile } from "../domain/tool-sources.js";
import type { RunTurnOptions } from "../runtime/run-turn.js";
import type { SessionStore } from "../store/session-store.js";
import type { ActiveTurns } from "./active-turns.js";
import type { GatewaySessions } from "./gateway/gateway-sessions.js";
import type { PendingApprovals } from "./pending-approvals.js";
import type { RunningExperiments } from "./running-experiments.js";
import type { SuiteCatalog } from "./suites-catalog.js";

/** What every turn the server runs shares: where models and tools come from, fixed models, and
 * an approver that replaces the API's pending approvals (tests). */
export interface RunTurnDefaults {
  providers: LabProviders;
  models?: RunTurnOptions["models"];
  approve?: RunTurnOptions["approve"];
  /**
   * The lab config file (agent-lab.yaml) as loaded at start, for what only the server reads from
   * it: the gateway's `upstreams`. Null or absent: no file, so no upstreams.
   */
  labConfig?: LabConfigFile | null;
  /**
   * The environment the providers' models read their keys and OPENAI_BASE_URL from (`serve`
   * passes its own); the gateway builds per-request copies of it. Default process.env.
   */
  env?: Environment;
}

/** What the routes are given by `createApp`. */
export interface ServerDependencies {
  store: SessionStore;
  turns: ActiveTurns;
  /** Experiments this server runs, one per experiment id (started by POST /api/experiments). */
  experiments: RunningExperiments;
  /** The suite files experiments may be started from. */
  suites: SuiteCatalog;
  /** Calls of this server's turns waiting for a decision (the approvals routes answer them). */
  approvals: PendingApprovals;
  /** Largest accepted JSON body, in bytes (413 above). */
  maxBodyBytes: number;
  /** Largest accepted import document, in bytes: exports of long sessions are large. */
  maxImportBytes: number;
  maxGatewayBodyBytes: number;
  runTurnDefaults: RunTurnDefaults;
  /** The turns of the OpenAI-compatible gateway (`/v1/chat/completions`), by session. */
  gateway: GatewaySessions;
  heartbeatMs: number;
  version: string;
  /** Reports a failure the client was only told about generically. */
  reportError(where: string, error: unknown): void;
}
