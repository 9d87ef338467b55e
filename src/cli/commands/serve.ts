import type { Command } from "commander";
import { z } from "zod";
import { parseInput } from "../../domain/validation.js";
import { DEFAULT_HOST, DEFAULT_PORT, startServer } from "../../server/start-server.js";
import type { CommandContext } from "../command-context.js";
import { openStoreForWriting } from "../database-path.js";

export const TOKEN_ENV = "AGENT_LAB_TOKEN";

const ServeFlags = z.object({
  host: z.string().trim().min(1, "give an address, e.g. 127.0.0.1").default(DEFAULT_HOST),
  port: z.coerce
    .number({ error: "must be a number" })
    .int("must be a whole number")
    .min(0, "must be 0 to 65535")
    .max(65_535, "must be 0 to 65535")
    .default(DEFAULT_PORT),
  token: z.string().optional(),
});

const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

export function registerServeCommand(program: Command, context: CommandContext): void {
  program
    .command("serve")
    .description(
      "Serve the web UI and the HTTP API (JSON, live turns over server-sent events) from the lab's database.",
    )
    .option("--host <address>", `the address to listen on (default: ${DEFAULT_HOST})`)
    .option("--port <number>", `the port; 0 picks a free one (default: ${DEFAULT_PORT})`)
    .option(
      "--token <token>",
      `require "Authorization: Bearer TOKEN" on every API request (default: $${TOKEN_ENV}); needed for any address other than 127.0.0.1`,
    )
    .addHelpText(
      "after",
      `
By default the server listens on 127.0.0.1 only, so nothing outside this machine reaches it; requests
that name another host or come from another site's page are refused. Any other address needs a token
of 16 or more characters; prefer $${TOKEN_ENV} to --token, which other users can see in the
process list. Ctrl-C cancels the running turns (stored as cancelled) and stops.

Examples:
  $ agent-lab serve
  $ agent-lab serve --port 0
  $ agent-lab --db lab.sqlite3 serve --port 8080
  $ ${TOKEN_ENV}=$(openssl rand -hex 24) agent-lab serve --host 0.0.0.0`,
    )
    .action(async (flags: { host?: string; port?: string; token?: string }, command: Command) => {
      const { io } = context;
      const options = parseInput(
        ServeFlags,
        { ...flags, token: flags.token ?? (io.env[TOKEN_ENV] || undefined) },
        "serve",
      );
      const store = openStoreForWriting(context.database(command), (line) =>
        io.stderr.write(`${line}\n`),
      );
      let server: Awaited<ReturnType<typeof startServer>>;
      try {
        server = await startServer({
          store,
          host: options.host,
          port: options.port,
          token: options.token,
          runTurnDefaults: { model_dependencies: { env: io.env } },
          log: (line) => io.stderr.write(`${line}\n`),
        });
      } catch (error) {
        store.close();
        throw error;
      }
      io.stdout.write(
        `Agent Lab is running at ${server.url} (simulated model by default; Ctrl-C to stop)\n`,
      );
      if (options.token !== undefined) {
        io.stdout.write(
          "API requests need the header Authorization: Bearer <token>; the web UI asks for the token once per tab\n",
        );
      }
      let stop: (signal: NodeJS.Signals) => void = () => {};
      const stopped = new Promise<NodeJS.Signals>((resolve) => {
        stop = resolve;
      });
      let stopping = false;
      const onSignal = (signal: NodeJS.Signals) => {
        // A second Ctrl-C does not wait for the running turns to wind down.
        if (stopping) process.exit(130);
        stopping = true;
        stop(signal);
      };
      for (const name of STOP_SIGNALS) process.on(name, onSignal);
      try {
        const signal = await stopped;
        io.stderr.write(`agent-lab: ${signal}: stopping the server\n`);
        await server.close();
      } finally {
        for (const name of STOP_SIGNALS) process.off(name, onSignal);
        store.close();
      }
    });
}
