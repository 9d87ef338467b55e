import { readFileSync } from "node:fs";
import { Hono } from "hono";
import { createLabProviders } from "../composition/lab-providers.js";
import type { SessionStore } from "../store/session-store.js";
import { ActiveTurns } from "./active-turns.js";
import { GatewaySessions } from "./gateway/gateway-sessions.js";
import { errorResponse, RouteNotFoundError } from "./http-errors.js";
import { PendingApprovals } from "./pending-approvals.js";
import { DEFAULT_MAX_BODY_BYTES } from "./request-body.js";
import { registerApprovalRoutes } from "./routes/approvals.js";
import { registerDerivedSessionRoutes } from "./routes/derived-sessions.js";
import { registerEndpointRoutes } from "./routes/endpoints.js";
import { registerExperimentRoutes } from "./routes/experiments.js";
import { registerGatewayRoutes } from "./routes/gateway.js";
import { registerGatewayModelRoutes } from "./routes/gateway-models.js";
import { registerMetaRoutes } from "./routes/meta.js";
import { registerSessionRoutes } from "./routes/sessions.js";
import { registerSuiteRoutes } from "./routes/suites.js";
import { registerTransferRoutes } from "./routes/transfer.js";
import { registerTurnRoutes } from "./routes/turns.js";
import { RunningExperiments } from "./running-experiments.js";
import { type AllowedHosts, requestGuards, responseHeaders } from "./security.js";
import type { RunTurnDefaults, ServerDependencies } from "./server-dependencies.js";
import { DEFAULT_HEARTBEAT_MS } from "./sse.js";
import { defaultWebRoot, staticAssets } from "./static-assets.js";
import { bundledSuitesDir, SuiteCatalog } from "./suites-catalog.js";

export type { RunTurnDefaults } from "./server-dependencies.js";

export const DEFAULT_MAX_IMPORT_BYTES = 32 * 1024 * 1024;
/** A gateway request carries a whole conversation, images as data URLs included. */
export const DEFAULT_MAX_GATEWAY_BODY_BYTES = 32 * 1024 * 1024;

export interface CreateAppOptions {
  store: SessionStore;
  /**
   * When set, every /api request needs `Authorization: Bearer TOKEN` or the cookie a page address
   * with `?token=TOKEN` sets. (`startServer` always sets one unless told `token: false`.)
   */
  token?: string | undefined;
  /**
   * The `Host` header values (lower case, with the port) to answer; others get 403. Default: the
   * loopback names (localhost, 127.0.0.1, [::1]) on any port. `startServer` sets the bound ones.
   */
  allowedHosts?: AllowedHosts | undefined;
  /** Models and tools for every turn (default: the built-ins, keys from process.env); fixed models. */
  runTurnDefaults?: Partial<RunTurnDefaults> | undefined;
  /** Largest JSON body in bytes (default 1 MiB); larger → 413. */
  maxBodyBytes?: number | undefined;
  /** Largest import document in bytes (default 32 MiB). */
  maxImportBytes?: number | undefined;
  /** Largest `/v1/chat/completions` body in bytes (default 32 MiB). */
  maxGatewayBodyBytes?: number | undefined;
  /** The built web UI (default `dist/web` of this package). */
  webRoot?: string | undefined;
  /** Where unexpected failures are reported (default stderr). Never receives a secret. */
  log?: ((line: string) => void) | undefined;
  /** Interval of the SSE keep-alive comments (default 15 s). */
  heartbeatMs?: number | undefined;
  /**
   * Folders of suite files experiments may be started from, after the bundled `suites/` (the
   * lab config file's `suites_dirs`, `serve --suites`). Requests name suites, never paths.
   */
  suitesDirs?: readonly string[] | undefined;
  /** How long a gateway turn waits for its client's tool replies (default 10 minutes). */
  gatewayClientWaitMs?: number | undefined;
  /** How long after its last answer an unnamed gateway conversation may go on (default 30 minutes). */
  gatewayConversationGapMs?: number | undefined;
}

function packageVersion(): string {
  const text = readFileSync(new URL("../../package.json", import.meta.url), "utf8");
  return (JSON.parse(text) as { version: string }).version;
}

const VERSION = packageVersion();

/** A line for the log: what failed and where, with any configured token blanked out. */
function describeFailure(where: string, error: unknown, token: string | undefined): string {
  const text =
    error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
  const line = `agent-lab server: unexpected failure in ${where}: ${text}`;
  return token ? line.split(token).join("[redacted]") : line;
}

/** The app and its running turns and experiments (which `startServer` cancels on close). */
export function buildApp(options: CreateAppOptions): {
  app: Hono;
  turns: ActiveTurns;
  experiments: RunningExperiments;
  gateway: GatewaySessions;
} {
  const turns = new ActiveTurns();
  const experiments = new RunningExperiments();
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const providers = options.runTurnDefaults?.providers ?? createLabProviders();
  const gateway = new GatewaySessions({
    store: options.store,
    models: providers.models,
    busy: (session_id) => turns.has(session_id),
    report: (error) => log(describeFailure("gateway conversation markers", error, options.token)),
    ...(options.gatewayClientWaitMs === undefined
      ? {}
      : { client_wait_ms: options.gatewayClientWaitMs }),
    ...(options.gatewayConversationGapMs === undefined
      ? {}
      : { conversation_gap_ms: options.gatewayConversationGapMs }),
  });
  const deps: ServerDependencies = {
    store: options.store,
    turns,
    experiments,
    suites: new SuiteCatalog([bundledSuitesDir(), ...(options.suitesDirs ?? [])]),
    approvals: new PendingApprovals(),
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxImportBytes: options.maxImportBytes ?? DEFAULT_MAX_IMPORT_BYTES,
    maxGatewayBodyBytes: options.maxGatewayBodyBytes ?? DEFAULT_MAX_GATEWAY_BODY_BYTES,
    runTurnDefaults: {
      ...options.runTurnDefaults,
      providers,
    },
    gateway,
    heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    version: VERSION,
    reportError: (where, error) => log(describeFailure(where, error, options.token)),
  };

  const app = new Hono();
  app.use(responseHeaders());
  app.use(requestGuards({ allowedHosts: options.allowedHosts, token: options.token }));
  registerMetaRoutes(app, deps);
  registerSessionRoutes(app, deps);
  registerTurnRoutes(app, deps);
  registerDerivedSessionRoutes(app, deps);
  registerApprovalRoutes(app, deps);
  registerTransferRoutes(app, deps);
  registerExperimentRoutes(app, deps);
  registerSuiteRoutes(app, deps);
  registerEndpointRoutes(app, deps);
  registerGatewayModelRoutes(app, deps);
  registerGatewayRoutes(app, deps);
  app.get("*", staticAssets(options.webRoot ?? defaultWebRoot()));

  app.notFound((c) => {
    const { status, body } = errorResponse(new RouteNotFoundError(c.req.method, c.req.path));
    return c.json(body, status);
  });
  app.onError((error, c) => {
    const { status, body } = errorResponse(error);
    if (status === 500) deps.reportError(`${c.req.method} ${c.req.path}`, error);
    return c.json(body, status);
  });
  return { app, turns, experiments, gateway };
}

/** The HTTP API and the web UI as a hono app (see `startServer` to listen). */
export function createApp(options: CreateAppOptions): Hono {
  return buildApp(options).app;
}
