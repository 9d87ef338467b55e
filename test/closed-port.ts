import { connect } from "node:net";

/**
 * A loopback port nothing listens on: a connection to it is refused. Taken below the ports the
 * system hands out to `listen(0)` (32768 and up on Linux): a port just bound and closed again could
 * be handed to another test's server, in this worker or another, before the connection is tried,
 * which then reached that server instead of being refused. Each candidate is tried first; none is
 * one of fetch's blocked ports (1, 9 and the like), which fetch refuses without connecting.
 */
export async function closedLoopbackPort(): Promise<number> {
  for (const port of [47, 51, 61, 1023]) {
    if (await refused(port)) return port;
  }
  throw new Error("every candidate loopback port below 1024 accepts connections here");
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    // A filter that drops loopback packets would leave the attempt hanging for minutes.
    socket.setTimeout(1_000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}
