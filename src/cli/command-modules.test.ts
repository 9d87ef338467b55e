import { describe, expect, it } from "vitest";
import { commandsFor } from "./command-modules.js";

/** How many commands the lab has: what the program's own help lists. */
const ALL = (await commandsFor([])).length;

describe("commandsFor", () => {
  it("loads only the command the arguments name, after the program's options", async () => {
    expect(ALL).toBe(19);
    for (const argv of [
      ["sessions"],
      ["--db", "lab.sqlite3", "sessions", "--json"],
      ["--db=lab.sqlite3", "--lab-config", "lab.yaml", "db", "copy", "--help"],
      ["run", "--help"],
    ]) {
      const [register, ...more] = await commandsFor(argv);
      expect(more, argv.join(" ")).toHaveLength(0);
      expect(typeof register).toBe("function");
    }
  });

  it("loads every command for the program's help and version, help, a typo or none", async () => {
    for (const argv of [
      [],
      ["--help"],
      ["-v", "run"],
      ["--db", "lab.sqlite3", "-h", "run"],
      ["help", "run"],
      ["sesions"],
      ["constructor"],
      ["--", "run"],
      // The value of --db, not a command.
      ["--db", "run"],
    ]) {
      expect(await commandsFor(argv), argv.join(" ")).toHaveLength(ALL);
    }
  });
});
