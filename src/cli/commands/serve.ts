import { statSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { z } from "zod";
import { labSuitesDirs } from "../../composition/lab-config.js";
import { InvalidInputError } from "../../domain/errors.js";
import { parseInput } from "../../domain/validation.js";
import { DEFAULT_HOST, DEFAULT_PORT } from "../../server/server-defaults.js";
import type { RunningServer } from "../../server/start-server.js";
import type { SessionStore } from "../../store/session-store.js";
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
  /** false: --no-token. */
  token: z.union([z.string(), z.literal(false)]).optional(),
});

const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** A suite folder must exist: a typo would otherwise just leave the start form's list short. */
function checkFolder(folder: string, where: string): string {
  let isFolder = false;
  try {
    isFolder = statSync(folder).isDirectory();
  } catch {}
  if (!isFolder) throw new InvalidInputError(`${where}: not a folder: ${folder}`);
  return folder;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** The bare address (no brackets) that listens on every interface. */
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", ""]);

/**
 * The address to print: a server bound to every interface is opened through loopback, since
 * http://0.0.0.0:… is no address a browser can open (and is not clickable in a terminal).
 */
export function openableUrl(server: Pick<RunningServer, "url" | "host">): string {
  const bare = server.host.replace(/^\[|\]$/g, "");
  if (!WILDCARD_HOSTS.has(bare)) return server.url;
  const url = new URL(server.url);
  url.hostname = bare === "0.0.0.0" ? "127.0.0.1" : "[::1]";
  return url.href;
}

/**
 * A token made for this run is printed in the address to open, as Jupyter does (the terminal is the
 * user's own); one the user chose is not, so it stays out of terminal logs and recordings.
 */
function startupLines(
  server: RunningServer,
  chosen: string | false | undefined,
  database: string,
): string {
  const url = openableUrl(server);
  const everywhere =
    url === server.url
      ? ""
      : `Listening on every interface (${server.host}, port ${server.port})\n`;
  const running = (address: string) =>
    `Agent Lab is running at ${address} (simulated model by default; Ctrl-C to stop)\n${everywhere}Database ${database}\n`;
  if (server.token === null) {
    return `${running(url)}No token (--no-token): every user and program on this machine can use this lab\n`;
  }
  if (chosen === undefined) {
    const browserUrl = `${url}?token=${encodeURIComponent(server.token)}`;
    return `${running(browserUrl)}Open that address once: the browser keeps the token in a cookie. API clients send the header Authorization: Bearer <token>. The token is new at each start (choose one with $${TOKEN_ENV})\n`;
  }
  return `${running(url)}Open ${url}?token=<your token> once: the browser keeps it in a cookie. API clients send the header Authorization: Bearer <your token>\n`;
}

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
      `the access token (default: $${TOKEN_ENV}, else a new random one for this run)`,
    )
    .option("--no-token", "no token: every local user can use the lab (127.0.0.1 only)")
    .option(
      "--suites <dir>",
      "a folder of suite files (*.yaml) the web UI and API may start experiments from, besides the bundled ones and the lab config's suites_dirs (repeatable)",
      collect,
    )
    .addHelpText(
      "after",
      `
By default the server listens on 127.0.0.1 only, so nothing outside this machine reaches it, and it
needs an access token, so no other user or program on this machine can use it either: serve prints
the address to open, with the token (http://127.0.0.1:${DEFAULT_PORT}/?token=...); the browser keeps it
in a cookie, and API clients send "Authorization: Bearer TOKEN". Requests that name another host or
come from another site's page are refused. Experiments can be started from the web UI and the API
with the bundled suites and the suite files of --suites folders and the lab config's suites_dirs
(never a path a request names). A token of your own needs 16 or more characters; prefer
$${TOKEN_ENV} to --token, which other users can see in the process list. Ctrl-C cancels the running
turns (stored as cancelled) and stops.

Examples:
  $ agent-lab serve
  $ agent-lab serve --port 0
  $ agent-lab --db lab.sqlite3 serve --port 8080
  $ agent-lab serve --no-token
  $ agent-lab serve --suites ./my-suites
  $ ${TOKEN_ENV}=$(openssl rand -hex 24) agent-lab serve --host 0.0.0.0`,
    )
    .action(
      async (
        flags: { host?: string; port?: string; token?: string | false; suites?: string[] },
        command: Command,
      ) => {
        const { io } = context;
        const { suites = [], ...rest } = flags;
        const options = parseInput(
          ServeFlags,
          { ...rest, token: rest.token ?? (io.env[TOKEN_ENV] || undefined) },
          "serve",
        );
        // Before the store: a bad lab config file is refused with nothing left open.
        const providers = context.providers(command);
        let suitesDirs: string[];
        try {
          const configured = labSuitesDirs(providers.lab_config).map((folder) =>
            checkFolder(folder, `${providers.lab_config}: suites_dirs`),
          );
          suitesDirs = [...configured, ...suites.map((folder) => checkFolder(folder, "--suites"))];
        } catch (error) {
          await providers.tools.close();
          throw error;
        }
        // The server's modules load here, not with every command (`agent-lab --help` stays quick).
        const { startServer } = await import("../../server/start-server.js");
        const location = context.database(command);
        let store: SessionStore;
        try {
          store = await openStoreForWriting(location, io.stderr);
        } catch (error) {
          await providers.tools.close();
          throw error;
        }
        let server: RunningServer;
        try {
          server = await startServer({
            store,
            host: options.host,
            port: options.port,
            token: options.token,
            runTurnDefaults: { providers, labConfig: providers.lab_config_file, env: io.env },
            suitesDirs,
            log: (line) => io.stderr.write(`${line}\n`),
          });
        } catch (error) {
          await providers.tools.close();
          await store.close();
          throw error;
        }
        io.stdout.write(
          startupLines(
            server,
            options.token,
            location.is_postgres ? location.label : resolve(location.path),
          ),
        );
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
          await providers.tools.close();
          await store.close();
        }
      },
    );
}
