import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * A TCP relay to a server on 127.0.0.1, which a test can take away (every connection cut, new ones
 * refused) and bring back on the same port: a database restart, as its clients meet it.
 */
export class TcpRelay {
  readonly #sockets = new Set<Socket>();
  #server: Server | null = null;
  port = 0;

  private constructor(
    readonly targetHost: string,
    readonly targetPort: number,
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpRelay> {
    const relay = new TcpRelay(targetHost, targetPort);
    await relay.up();
    return relay;
  }

  /** Accepting again (on the same port once it had one). */
  async up(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket);
        socket.on("close", () => this.#sockets.delete(socket));
        socket.on("error", () => {});
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, "127.0.0.1", resolve));
    const address = server.address();
    this.port = typeof address === "object" && address !== null ? address.port : 0;
    this.#server = server;
  }

  /** Every connection cut and new ones refused, until `up`. */
  async down(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    for (const socket of this.#sockets) socket.destroy();
    if (server !== null) await new Promise((resolve) => server.close(resolve));
  }
}
