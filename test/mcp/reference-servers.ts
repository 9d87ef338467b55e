import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import { join } from "node:path";
import {
  McpServerDefinition,
  type McpServerDefinition as McpServerDefinitionType,
} from "../../src/domain/tool-sources.js";
import { repoRoot } from "../paths.js";

/** The official reference servers and the faulty fixture, as lab definitions. */

export const EVERYTHING_ENTRY = join(
  repoRoot,
  "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
);
export const FILESYSTEM_ENTRY = join(
  repoRoot,
  "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
);
export const FAULTY_ENTRY = join(repoRoot, "test/mcp/faulty-mcp-server.mjs");

export function stdioDefinition(
  entry: string,
  args: readonly string[] = [],
  extra: Partial<Record<keyof McpServerDefinitionType, unknown>> = {},
): McpServerDefinitionType {
  return McpServerDefinition.parse({ command: process.execPath, args: [entry, ...args], ...extra });
}

/** Whether a process with this id still exists. */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  server.close();
  await once(server, "close");
  return port;
}

export interface RunningHttpServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** server-everything over Streamable HTTP, on a free port it reads from $PORT. */
export async function startEverythingHttp(): Promise<RunningHttpServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_ENTRY, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`server-everything did not start: ${stderr}`)),
      15_000,
    );
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes("listening on port")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code}: ${stderr}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, "exit");
      child.kill("SIGKILL");
      await exited;
    },
  };
}

/** `${NAME}`: how a lab config names an environment variable. */
export const envReference = (name: string): string => `\${${name}}`;
