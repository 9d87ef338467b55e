import { z } from "zod";
import { ArgumentMatcher } from "./argument-matcher.js";
import { GatewayUpstream, UpstreamName } from "./gateway.js";

/**
 * The shapes of tools that come from outside the lab's built-ins (issue 10): declared (mock) tools,
 * which any session config or suite may carry, and HTTP tools and MCP servers, which only the lab
 * config file (`agent-lab.yaml`) may define — a request or an import may only select them by name,
 * since an API that let a caller name a command or a URL would hand out the machine.
 */

/** Names endpoints accept and that fit an `<event name="…">` tag; MCP tools become `SERVER__TOOL`. */
export const ToolName = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, "must be 1–64 letters, digits, _ or -");

/** A JSON Schema object for a tool's arguments. */
export const ToolParameters = z
  .looseObject({ type: z.literal("object") })
  .describe("a JSON Schema whose type is object");

/** What a mock answers: a result for the model, or an error result. */
export const MockOutcome = z.union([
  z.strictObject({ result: z.unknown() }),
  z.strictObject({ error: z.string().min(1) }),
]);
export type MockOutcome = z.output<typeof MockOutcome>;

/** The first case whose matchers all fit the arguments wins; else `default`. */
const When = z.record(z.string(), ArgumentMatcher).default({});
export const MockCase = z.union([
  z.strictObject({ when: When, result: z.unknown() }),
  z.strictObject({ when: When, error: z.string().min(1) }),
]);

export const DeclaredToolMock = z.union([
  MockOutcome,
  z.strictObject({ cases: z.array(MockCase).min(1), default: MockOutcome.optional() }),
]);
export type DeclaredToolMock = z.output<typeof DeclaredToolMock>;

/** A tool declared inline (session config `declared_tools`, suite `tools`): safe, needs nothing. */
export const DeclaredTool = z.strictObject({
  name: ToolName,
  description: z.string().default(""),
  parameters: ToolParameters.default({ type: "object", properties: {} }),
  mock: DeclaredToolMock,
  requires_approval: z.boolean().default(false),
});
export type DeclaredTool = z.output<typeof DeclaredTool>;
export type DeclaredToolInput = z.input<typeof DeclaredTool>;

/** Header values and env values name environment variables: `${NAME}` or `Bearer ${NAME}`. */
const EnvReferencing = z.record(z.string(), z.string()).default({});

export const HttpToolDefinition = z.strictObject({
  name: ToolName,
  description: z.string().default(""),
  parameters: ToolParameters.default({ type: "object", properties: {} }),
  /** The arguments are POSTed here as JSON; the response body (JSON or text) is the result. */
  url: z.string().url(),
  headers: EnvReferencing,
  timeout_ms: z.number().int().positive().default(30_000),
  max_response_bytes: z.number().int().positive().default(1_048_576),
  requires_approval: z.boolean().default(false),
});
export type HttpToolDefinition = z.output<typeof HttpToolDefinition>;

/** One MCP server: stdio (`command`) or Streamable HTTP (`url`), never both. */
export const McpServerDefinition = z
  .strictObject({
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    env: EnvReferencing,
    cwd: z.string().optional(),
    url: z.string().url().optional(),
    headers: EnvReferencing,
    /** Per call; a server that does not answer in time gives that call an error result. */
    timeout_ms: z.number().int().positive().default(30_000),
    /**
     * Start and tool listing: apart from the call timeout, because a server started by `npx` (or on
     * a loaded machine) may take far longer to start than any of its calls may take to answer.
     */
    start_timeout_ms: z.number().int().positive().default(60_000),
    /**
     * Overrides the default, which follows the tool's annotations: a tool that says
     * `destructiveHint: true`, or does not say `readOnlyHint: true`, requires approval.
     */
    requires_approval: z.boolean().optional(),
  })
  .refine((server) => (server.command === undefined) !== (server.url === undefined), {
    message: "give exactly one of command (stdio) or url (Streamable HTTP)",
  });
export type McpServerDefinition = z.output<typeof McpServerDefinition>;

/** Server names prefix their tools (`SERVER__TOOL`), so they may not hold `__`. */
export const McpServerName = z
  .string()
  .regex(/^[A-Za-z0-9-]+(_[A-Za-z0-9-]+)*$/, "letters, digits, - and single _ only");

/** `agent-lab.yaml`: what this machine's lab may run. Never accepted from a request or an import. */
export const LabConfigFile = z.strictObject({
  mcp_servers: z.record(McpServerName, McpServerDefinition).default({}),
  http_tools: z.array(HttpToolDefinition).default([]),
  /**
   * Folders of suite files (`*.yaml`) the server may start experiments from, besides the bundled
   * suites; relative ones are read from the config file's folder.
   */
  suites_dirs: z.array(z.string().min(1, "name a folder")).default([]),
  /** Endpoints the gateway (`/v1`) may send requests to, by the name a client puts in `model`. */
  upstreams: z.record(UpstreamName, GatewayUpstream).default({}),
});
export type LabConfigFile = z.output<typeof LabConfigFile>;

/** How a pending call that requires approval was decided, and by whom. */
export const ApprovalDecision = z.strictObject({
  decision: z.enum(["approve", "deny"]),
  /** Edited arguments, validated again before the tool runs. */
  arguments: z.record(z.string(), z.unknown()).optional(),
  /** `user` (UI, API, CLI prompt), `policy` (suites, `--approve all|none`), `timeout`. */
  decided_by: z.enum(["user", "policy", "timeout"]),
  reason: z.string().optional(),
});
export type ApprovalDecision = z.output<typeof ApprovalDecision>;
