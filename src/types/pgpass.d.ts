declare module "pgpass" {
  /** Looks up ~/.pgpass (or $PGPASSFILE) as libpq does; the password, or undefined. */
  export default function pgPass(
    connection: { host: string; port: string; database: string; user: string },
    found: (password: string | undefined) => void,
  ): void;
}
