import { formatDuration } from "../domain/number-format.js";
import { terminalSafe, terminalSafeJson } from "../domain/terminal-text.js";

export { terminalSafe };

/**
 * Where a command writes, and the small formatting helpers every command shares. Commands never
 * touch `process.stdout` directly, so the same code serves the binary and in-process callers.
 */
export interface CliIo {
  stdout: { write(text: string): unknown; isTTY?: boolean };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  env: Readonly<Record<string, string | undefined>>;
  /** What the interactive commands read (`chat`, `delete`'s confirmation, `import -`). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, stdin: process.stdin };
}

/** One JSON document, then a newline: what every `--json` flag prints. */
export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${terminalSafeJson(JSON.stringify(value, null, 2))}\n`);
}

/** The one line a failure prints on stderr. */
export function writeError(io: CliIo, message: string): void {
  // Error messages quote endpoints, models and stored names: nothing in them may drive the terminal.
  io.stderr.write(`agent-lab: ${terminalSafe(message.replace(/\s*\n\s*/g, " "))}\n`);
}

/** `12 ms`, `3.4 ms`, `1.24 s`; `–` when there is no measurement (src/domain/number-format.ts). */
export function formatMs(ms: number | null | undefined): string {
  return formatDuration(ms);
}

/** 1234567 → `1,234,567`. */
export function formatCount(count: number): string {
  return count.toLocaleString("en-US");
}

/** An ISO timestamp as `2025-01-02 10:11:12` (UTC, like the stored value). */
export function formatTimestamp(iso: string): string {
  return iso.replace("T", " ").replace(/\.\d+Z$|Z$/, "");
}

/** `1 turn`, `3 turns`. */
export function plural(count: number, noun: string): string {
  return `${formatCount(count)} ${noun}${count === 1 ? "" : "s"}`;
}

/** Cuts `text` to `max` characters on one line, marking the cut; control characters shown escaped. */
export function truncate(text: string, max: number): string {
  const line = terminalSafe(text.replace(/\s*\n\s*/g, " "));
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
  align?: "left" | "right";
}

/** A plain text table: a header line, then one line per row, columns two spaces apart. */
export function formatTable<Row>(rows: readonly Row[], columns: readonly Column<Row>[]): string {
  const cells = rows.map((row) => columns.map((column) => terminalSafe(column.value(row))));
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...cells.map((line) => (line[index] ?? "").length)),
  );
  const render = (line: readonly string[]) =>
    line
      .map((cell, index) => {
        const width = widths[index] ?? 0;
        return columns[index]?.align === "right" ? cell.padStart(width) : cell.padEnd(width);
      })
      .join("  ")
      .trimEnd();
  return [
    render(columns.map((column) => column.header)),
    ...cells.map((line) => render(line)),
  ].join("\n");
}

/**
 * The models a session uses, for its header: a chat_agent_tools session has no event agent at
 * work, so naming one would suggest a second model that never runs.
 */
export function agentModels(
  mode: string,
  config: { chat_agent: { model: string }; event_agent: { model: string } },
): string {
  const chat = `chat agent ${config.chat_agent.model}`;
  return mode === "dual_agent" ? `${chat} · event agent ${config.event_agent.model}` : chat;
}
