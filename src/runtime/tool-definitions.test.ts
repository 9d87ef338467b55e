import { describe, expect, it } from "vitest";
import { renderEventCatalog } from "../domain/event-protocol.js";
import { createBuiltinTools } from "../tools/builtin/index.js";
import { ToolRegistry } from "../tools/registry.js";
import { eventCatalog, toolDefinitions } from "./tool-definitions.js";

describe("toolDefinitions", () => {
  it("copies a registry's definitions once, frozen, and shares them between calls", () => {
    const registry = new ToolRegistry(createBuiltinTools());
    const first = toolDefinitions(registry);
    expect(first).toEqual(registry.definitions());
    expect(toolDefinitions(registry)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    const [search] = first;
    expect(Object.isFrozen(search?.parameters)).toBe(true);
    // A port that tried to edit its request would throw rather than change every later call.
    expect(() => {
      (search as { name: string }).name = "edited";
    }).toThrow(TypeError);
    expect(toolDefinitions(registry)[0]?.name).toBe("mock_search");
  });

  it("leaves the registry's own copies editable, and gives each registry its own", () => {
    const registry = new ToolRegistry(createBuiltinTools());
    const shared = toolDefinitions(registry);
    const own = registry.definitions();
    (own[0]?.parameters as Record<string, unknown>).edited = true;
    expect(shared[0]?.parameters).not.toHaveProperty("edited");
    const selected = registry.select(["mock_ticket"]);
    expect(toolDefinitions(selected).map((tool) => tool.name)).toEqual(["mock_ticket"]);
    expect(toolDefinitions(registry).map((tool) => tool.name)).toEqual([
      "mock_search",
      "mock_ticket",
    ]);
  });

  it("renders a registry's event catalog once, as renderEventCatalog renders its tools", () => {
    const registry = new ToolRegistry(createBuiltinTools()).select(["mock_search"]);
    const catalog = eventCatalog(registry);
    expect(catalog).toBe(renderEventCatalog(registry.definitions()));
    expect(catalog).toContain("mock_search");
    expect(catalog).not.toContain("mock_ticket");
    expect(eventCatalog(registry)).toBe(catalog);
  });
});
