/** Where `serve` listens unless told: apart from start-server.ts, so the CLI can name them cheaply. */
export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 4173;
