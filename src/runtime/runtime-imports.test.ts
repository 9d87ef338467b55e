import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The runtime reaches models and tools only through its ports (turn-providers.ts): adapters are
 * chosen by the composition root. This reads every runtime source file's imports.
 */
const RUNTIME = dirname(fileURLToPath(import.meta.url));
const SRC = resolve(RUNTIME, "..");

/** What the runtime may import from outside itself: the domain, the store port, the two ports. */
const ALLOWED = [
  /^domain\//,
  /^store\/session-store\.ts$/,
  /^providers\/(chat-model|errors|tokenizer|usage-estimate)\.ts$/,
  /^tools\/(registry|tool|tool-source|schema-errors)\.ts$/,
];

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)].map(
    (match) => match[1] ?? "",
  );
  return specifiers
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => relative(SRC, resolve(dirname(file), specifier)).replace(/\.js$/, ".ts"));
}

describe("the runtime's dependencies", () => {
  it("imports no adapter (models, tool sources, the composition root)", () => {
    const outside = sourceFiles(RUNTIME).flatMap((file) =>
      importsOf(file)
        .filter((target) => !target.startsWith("runtime/"))
        .filter((target) => !ALLOWED.some((pattern) => pattern.test(target)))
        .map((target) => `${relative(SRC, file)} -> ${target}`),
    );
    expect(outside).toEqual([]);
  });

  it("sees the files it checks (the check cannot pass by reading nothing)", () => {
    const all = sourceFiles(RUNTIME).flatMap(importsOf);
    expect(all).toContain("runtime/turn-providers.ts");
    expect(all).toContain("providers/chat-model.ts");
  });
});
