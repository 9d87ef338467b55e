import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { AgentLabError } from "../domain/errors.js";
import type { Scenario, Suite } from "../domain/experiment.js";
import { expandCells, loadSuite } from "../experiments/suite.js";

/**
 * The suite files the server may start experiments from: the bundled ones (the package's
 * `suites/`) and the `*.yaml` files of the folders its owner configured (`suites_dirs` in the lab
 * config file, `serve --suites DIR`). A request names a suite by its name, never by a path, so
 * nothing outside these folders can be read or run.
 */

/** The package's `suites/`: two levels up from src/server and from dist/server alike. */
export function bundledSuitesDir(): string {
  return fileURLToPath(new URL("../../suites/", import.meta.url));
}

/** No suite of the catalog has that name. */
export class SuiteNotFoundError extends AgentLabError {
  readonly code = "not_found" as const;
}

/** One suite as `GET /api/suites` lists it. */
export interface SuiteListing {
  name: string;
  file: string;
  description: string | null;
  scenarios: number;
  categories: Scenario["category"][];
  cells: { id: string; label: string }[];
  repetitions: number;
  concurrency: number;
}

/** A file of a suite folder that cannot be offered, and why (its problems, file:line:col). */
export interface SuiteProblem {
  file: string;
  error: string;
}

export interface SuiteCatalogPage {
  suites: SuiteListing[];
  invalid: SuiteProblem[];
}

export interface CatalogSuite {
  suite: Suite;
  file: string;
}

function listingOf({ suite, file }: CatalogSuite): SuiteListing {
  return {
    name: suite.name,
    file,
    description: suite.description ?? null,
    scenarios: suite.scenarios.length,
    categories: [...new Set(suite.scenarios.map((scenario) => scenario.category))],
    cells: expandCells(suite).map((cell) => ({ id: cell.id, label: cell.label })),
    repetitions: suite.repetitions,
    concurrency: suite.concurrency,
  };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Reads the folders on every call (a few small files), so a suite saved while the server runs is
 * offered at once. A folder that does not exist lists nothing; a file that does not parse is listed
 * under `invalid`; of two suites with one name the first folder's wins (bundled first).
 */
export class SuiteCatalog {
  readonly #folders: string[];

  constructor(folders: readonly string[]) {
    this.#folders = [...new Set(folders.map((folder) => resolve(folder)))];
  }

  get folders(): readonly string[] {
    return this.#folders;
  }

  list(): SuiteCatalogPage {
    const suites: SuiteListing[] = [];
    const invalid: SuiteProblem[] = [];
    const seen = new Map<string, string>();
    for (const file of this.#files()) {
      try {
        const listing = listingOf({ suite: loadSuite(file), file });
        const first = seen.get(listing.name);
        if (first !== undefined) {
          invalid.push({ file, error: `suite name ${listing.name} is already taken by ${first}` });
          continue;
        }
        seen.set(listing.name, file);
        suites.push(listing);
      } catch (error) {
        invalid.push({ file, error: messageOf(error) });
      }
    }
    return { suites, invalid };
  }

  /** The suite of that name, parsed; SuiteNotFoundError when no valid file has it. */
  find(name: string): CatalogSuite {
    for (const file of this.#files()) {
      let suite: Suite;
      try {
        suite = loadSuite(file);
      } catch {
        continue;
      }
      if (suite.name === name) return { suite, file };
    }
    throw new SuiteNotFoundError(
      `suite not found: ${name} (GET /api/suites lists the suites this server can start)`,
    );
  }

  /** The `*.yaml` / `*.yml` files of every folder, in folder order, then by name. */
  *#files(): Generator<string> {
    for (const folder of this.#folders) {
      let names: string[];
      try {
        names = readdirSync(folder, { withFileTypes: true })
          .filter((entry) => entry.isFile() && /\.ya?ml$/i.test(entry.name))
          .map((entry) => entry.name)
          .sort();
      } catch {
        continue;
      }
      for (const name of names) yield join(folder, name);
    }
  }
}
