import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { constants as osConstants, tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A throwaway PostgreSQL cluster for the tests: Debian's postgresql 15 server binaries, a fresh
 * data directory in a temp folder, a loopback port, password authentication (so the tests see a
 * credential travel in the URL the way a user's does). initdb and pg_ctl refuse to run as root,
 * so as root they run as the `postgres` user via runuser.
 */
export interface PostgresCluster {
  /** postgres://agentlab:PASSWORD@127.0.0.1:PORT/postgres */
  adminUrl: string;
  password: string;
  port: number;
  stop(): void;
}

const BIN_DIRS = ["15", "16", "17", "18"].map((major) => `/usr/lib/postgresql/${major}/bin`);

export function postgresBinDir(): string {
  const dir = BIN_DIRS.find((candidate) => existsSync(join(candidate, "pg_ctl")));
  if (!dir) {
    throw new Error(
      "the PostgreSQL tests need the PostgreSQL server binaries (Debian: apt-get install postgresql); none found in " +
        BIN_DIRS.join(", "),
    );
  }
  return dir;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  const root = mkdtempSync(join(tmpdir(), "agent-lab-pg-"));
  const data = join(root, "data");
  const pwfile = join(root, "pwfile");
  const password = randomBytes(12).toString("hex");
  writeFileSync(pwfile, `${password}\n`);
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(root, uid, gid);
    chownSync(pwfile, uid, gid);
  }
  chmodSync(root, 0o700);
  const run = (command: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", join(bin, command), ...args]]
      : [join(bin, command), args];
    return execFileSync(file, argv, { stdio: ["ignore", "pipe", "pipe"], cwd: root });
  };
  run("initdb", [
    "-D",
    data,
    "-U",
    "agentlab",
    "--auth=scram-sha-256",
    `--pwfile=${pwfile}`,
    "--encoding=UTF8",
    "--locale=C",
    "--no-sync",
  ]);
  const port = await freePort();
  // fsync off: a test cluster is thrown away, and syncing would dominate the suite's time.
  const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  run("pg_ctl", ["-D", data, "-o", options, "-l", join(root, "log"), "-w", "-t", "60", "start"]);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    process.off("exit", stop);
    for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
    try {
      run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  };
  // pg_ctl's server outlives the process that started it: Ctrl-C on a test run (which ends vitest
  // without its teardown) left a server and its folder behind, run after run.
  const onSignal = (signal: NodeJS.Signals) => {
    stop();
    // A process with its own handler (vitest's) ends itself; one without would not end at all.
    if (process.listenerCount(signal) === 0) {
      process.exit(128 + (osConstants.signals[signal] ?? 0));
    }
  };
  process.once("exit", stop);
  for (const signal of STOP_SIGNALS) process.once(signal, onSignal);
  return {
    adminUrl: `postgres://agentlab:${password}@127.0.0.1:${port}/postgres`,
    password,
    port,
    stop,
  };
}

/** The signals that end a test run from outside (Ctrl-C, `timeout`, a closed terminal). */
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** Creates an empty database `name` on the cluster of `adminUrl`; returns its URL (same user). */
export async function createPostgresDatabase(adminUrl: string, name: string): Promise<string> {
  const { default: pg } = await import("pg");
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
