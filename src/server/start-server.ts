import type { Server } from "node:http";
import { hostname, networkInterfaces } from "node:os";
import { createAdaptorServer } from "@hono/node-server";
import { InvalidInputError } from "../domain/errors.js";
import { loadTokenizer } from "../providers/tokenizer.js";
import { generateToken } from "./access-token.js";
import { buildApp, type CreateAppOptions } from "./app.js";
import { ServerListenError, TokenRequiredError } from "./http-errors.js";

import { DEFAULT_HOST, DEFAULT_PORT } from "./server-defaults.js";

export { DEFAULT_HOST, DEFAULT_PORT };
export const TOKEN_MIN_LENGTH = 16;

export interface StartServerOptions extends Omit<CreateAppOptions, "allowedHosts" | "token"> {
  /** Default 127.0.0.1. */
  host?: string | undefined;
  /**
   * What every request must present (see security.ts). Default: a random token made for this run.
   * `false`: none, so every user and program on this machine can use the lab; loopback hosts only.
   */
  token?: string | false | undefined;
  /** Default 4173; 0 picks a free port. */
  port?: number | undefined;
  /** More `Host` values to answer (e.g. a name in /etc/hosts), besides the bound address. */
  allowedHosts?: readonly string[] | undefined;
}

export interface RunningServer {
  /** e.g. `http://127.0.0.1:4173/`. */
  url: string;
  /** The token requests must present (null when started with `token: false`). */
  token: string | null;
  /** The address to open in a browser: `url` with `?token=…`, which the server trades for a cookie. */
  browserUrl: string;
  host: string;
  port: number;
  /** Cancels the running experiments and turns (stored as cancelled), then stops listening. */
  close(): Promise<void>;
}

const bare = (host: string) => host.replace(/^\[(.*)\]$/, "$1");

export function isLoopbackHost(host: string): boolean {
  const name = bare(host).toLowerCase();
  return name === "localhost" || name === "::1" || /^127(\.\d{1,3}){3}$/.test(name);
}

/** An address as it appears in a URL or a Host header: IPv6 in brackets. */
function urlHost(host: string): string {
  const name = bare(host);
  return name.includes(":") ? `[${name}]` : name;
}

/** The Host values this server answers to: the bound address and loopback names, with the port. */
function allowedHostsFor(host: string, port: number, extra: readonly string[]): string[] {
  const names = new Set([urlHost(host), "localhost", "127.0.0.1", "[::1]"]);
  const wildcard = ["0.0.0.0", "::", ""].includes(bare(host));
  if (wildcard) {
    // Bound to every interface: each of its addresses (and the machine's name) is "the bound address".
    names.add(hostname());
    for (const addresses of Object.values(networkInterfaces())) {
      for (const address of addresses ?? []) names.add(urlHost(address.address));
    }
  }
  const values = [...names].map((name) => `${name.toLowerCase()}:${port}`);
  if (port === 80) values.push(...[...names].map((name) => name.toLowerCase()));
  for (const value of extra) {
    const lower = value.toLowerCase();
    values.push(/:\d+$/.test(lower) ? lower : `${lower}:${port}`);
  }
  return values;
}

function checkToken(token: string): void {
  if (token.length < TOKEN_MIN_LENGTH || /\s/.test(token)) {
    throw new InvalidInputError(
      `the token must be at least ${TOKEN_MIN_LENGTH} characters without spaces (e.g. the output of: openssl rand -hex 24)`,
    );
  }
}

/** Starts the API and the web UI; resolves once the server listens. */
export async function startServer(options: StartServerOptions): Promise<RunningServer> {
  const host = options.host ?? DEFAULT_HOST;
  const requestedPort = options.port ?? DEFAULT_PORT;
  if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65_535) {
    throw new InvalidInputError(`port: ${requestedPort} is not a port number (0 to 65535)`);
  }
  if (options.token === false && !isLoopbackHost(host)) throw new TokenRequiredError(host);
  if (typeof options.token === "string") checkToken(options.token);
  const token = options.token === false ? null : (options.token ?? generateToken());

  // The o200k encoder (the sim's counts, every estimate) loads synchronously, in about half a
  // second: loaded before the server listens, no request waits behind the first turn that needs it.
  loadTokenizer();
  let allowed: string[] = [];
  const { app, turns, experiments, gateway } = buildApp({
    ...options,
    token: token ?? undefined,
    allowedHosts: () => allowed,
  });
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      const reason =
        error.code === "EADDRINUSE"
          ? `port ${requestedPort} is already in use on ${host}; choose another with --port (0 picks a free one)`
          : error.code === "EADDRNOTAVAIL"
            ? `${host} is not an address of this machine`
            : `${error.code ?? "error"}: ${error.message}`;
      reject(new ServerListenError(`cannot listen on ${host}:${requestedPort}: ${reason}`));
    };
    server.once("error", onError);
    server.listen(requestedPort, bare(host), () => {
      server.off("error", onError);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : requestedPort;
  allowed = allowedHostsFor(host, port, options.allowedHosts ?? []);

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const reason = new Error("the server is shutting down");
      // Experiments first: cancelled, they start no new turn, and their running turns are stored.
      await experiments.cancelAll(reason, 10_000);
      await turns.cancelAll(reason, 10_000);
      // Gateway turns waiting for their clients end too: their calls answered "interrupted".
      await gateway.close();
      server.closeAllConnections();
      await stopped;
    })();
    return closing;
  };
  const url = `http://${urlHost(host)}:${port}/`;
  const browserUrl = token === null ? url : `${url}?token=${encodeURIComponent(token)}`;
  return { url, token, browserUrl, host, port, close };
}
