import { describe, expect, it } from "vitest";
import { createCommandContext } from "./command-context.js";
import { commandsFor, type RegisterCommand, VALUE_OPTIONS } from "./command-modules.js";
import { buildProgram } from "./main.js";
import { processIo } from "./output.js";

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

describe("the program's options", () => {
  it("that take a value are the ones the scan skips the value of", () => {
    const program = buildProgram(createCommandContext(processIo()), []);
    const valued = program.options.filter((option) => option.required || option.optional);
    expect(valued.map((option) => option.long).sort()).toEqual([...VALUE_OPTIONS].sort());
    // No short form to skip the value of either.
    expect(valued.map((option) => option.short)).toEqual(valued.map(() => undefined));
  });

  it("each name loads the module of the command of that name", async () => {
    const names = (await commandsFor([])).map((register) => {
      const program = buildProgram(createCommandContext(processIo()), [register]);
      return program.commands.map((command) => command.name());
    });
    for (const [name] of names) {
      const [register, ...more] = await commandsFor([name as string]);
      expect(more).toHaveLength(0);
      const program = buildProgram(createCommandContext(processIo()), [
        register as RegisterCommand,
      ]);
      expect(program.commands.map((command) => command.name())).toEqual([name]);
    }
    expect(names.every((registered) => registered.length === 1)).toBe(true);
  });
});
