import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { repoRoot } from "../../test/paths.js";

function agentLab(...args: string[]) {
  return spawnSync(process.execPath, [join(repoRoot, "bin/agent-lab.js"), ...args], {
    encoding: "utf8",
  });
}

describe("agent-lab CLI", () => {
  it("prints the package version", () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8"));
    const result = agentLab("--version");
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(version);
  });

  it("prints help that says what the lab is", () => {
    const result = agentLab("--help");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("Usage: agent-lab");
    expect(result.stdout).toMatch(/tool\s+invocation\s+modes/);
    for (const command of [
      "run",
      "chat",
      "sessions",
      "usage",
      "show",
      "export",
      "import",
      "delete",
    ]) {
      expect(result.stdout).toMatch(new RegExp(`^  ${command} `, "m"));
    }
    expect(result.stdout).toContain("--db <path|url>");
    expect(result.stdout).not.toContain("being built");
  });

  it("gives every command a --help with examples", () => {
    const help = agentLab("--help").stdout;
    const commands = [...help.matchAll(/^ {2}([a-z]+) /gm)]
      .map((match) => match[1] ?? "")
      .filter((name) => name !== "help");
    expect(commands.length).toBeGreaterThanOrEqual(9);
    expect(help).toMatch(/Examples:\n {2}\$ agent-lab /);
    for (const command of commands) {
      const result = agentLab(command, "--help");
      expect(result.status, command).toBe(0);
      expect(result.stdout).toContain(`Usage: agent-lab ${command}`);
      expect(result.stdout).toMatch(new RegExp(`Examples:\\n {2}\\$ (.+ )?agent-lab ${command}`));
    }
  });

  it("prints the help without arguments, and refuses an unknown command", () => {
    const bare = agentLab();
    expect(bare.status).toBe(0);
    expect(bare.stdout).toContain("Usage: agent-lab");
    const unknown = agentLab("bogus");
    expect(unknown.status).toBe(1);
    expect(unknown.stderr.trim()).toBe("agent-lab: unknown command 'bogus'");
  });

  it("names the command a typo meant, and lists every command after the program's options", () => {
    const typo = agentLab("sesions");
    expect(typo.status).toBe(1);
    expect(typo.stderr).toContain("agent-lab: unknown command 'sesions'");
    expect(typo.stderr).toContain("(Did you mean sessions?)");
    const help = agentLab("--db", "lab.sqlite3", "--help").stdout;
    for (const command of ["run", "serve", "db", "export-otel", "worker", "tools"]) {
      expect(help).toMatch(new RegExp(`^  ${command} `, "m"));
    }
    expect(agentLab("help", "sessions").stdout).toContain("Usage: agent-lab sessions");
  });

  it("refuses an unknown option with one clear line and a non-zero exit", () => {
    const result = agentLab("--bogus");
    expect(result.status).not.toBe(0);
    expect(result.stderr.trim()).toBe("agent-lab: unknown option '--bogus'");
  });
});
