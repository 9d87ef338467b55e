// A tiny MCP server over stdio for failure tests, built with the SDK's low-level Server so it can
// send what a careless server sends (a schema without `type`, odd tool names). Tools:
//   pid            answers its own process id
//   exit           exits mid-call (the call never gets an answer)
//   hang           never answers
//   big            answers `size` characters of text
//   loose-schema   lists an input schema without `type` or `properties`
//   weird.name/x   a name endpoints refuse
//   string-schema  an input schema of type string (cannot take named arguments)
//   fails          answers isError: true
//   delete         says destructiveHint: true
//   (a 70-character name)
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const object = { type: "object", properties: {} };
const server = new Server({ name: "faulty", version: "1.0.0" }, { capabilities: { tools: {} } });

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: "pid",
      description: "process id",
      inputSchema: object,
      annotations: { readOnlyHint: true },
    },
    { name: "exit", description: "exits mid-call", inputSchema: object },
    { name: "hang", description: "never answers", inputSchema: object },
    {
      name: "big",
      description: "a large text",
      inputSchema: {
        type: "object",
        properties: { size: { type: "integer" } },
        required: ["size"],
      },
      annotations: { readOnlyHint: true, destructiveHint: false },
    },
    { name: "loose-schema", description: "careless schema", inputSchema: { description: "x" } },
    { name: "weird.name/x", description: "odd name", inputSchema: object },
    { name: "string-schema", description: "not an object", inputSchema: { type: "string" } },
    {
      name: "fails",
      description: "reports an error",
      inputSchema: object,
      annotations: { readOnlyHint: true },
    },
    { name: "l".repeat(70), description: "long name", inputSchema: object },
    {
      name: "delete",
      description: "destructive",
      inputSchema: object,
      annotations: { readOnlyHint: true, destructiveHint: true },
    },
  ],
}));

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  switch (request.params.name) {
    case "pid":
      return { content: [{ type: "text", text: String(process.pid) }] };
    case "exit":
      setTimeout(() => process.exit(3), 10);
      return new Promise(() => {});
    case "hang":
      return new Promise(() => {});
    case "big":
      return {
        content: [{ type: "text", text: "x".repeat(Number(request.params.arguments?.size ?? 0)) }],
      };
    case "fails":
      return { isError: true, content: [{ type: "text", text: "the disk is on fire" }] };
    default:
      return { content: [{ type: "text", text: `called ${request.params.name}` }] };
  }
});

process.stderr.write("faulty server ready\n");
await server.connect(new StdioServerTransport());
