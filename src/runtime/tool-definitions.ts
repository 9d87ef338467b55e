import type { ChatToolDefinition } from "../domain/chat-tool.js";
import { renderEventCatalog } from "../domain/event-protocol.js";
import type { ToolRegistry } from "../tools/registry.js";
import { deepFreeze } from "./deep-freeze.js";

/**
 * A registry's tool definitions, copied once per registry and frozen: every round offers them (and
 * dual_agent renders its catalog from them), and the copy `definitions()` makes on each call (a
 * structuredClone of every schema) was a measurable part of what a round cost the lab. A registry
 * never changes once built (its validators are compiled from the schemas it was given), and a
 * frozen copy can be shared by every call: a port only reads its request (ChatModelRequest's
 * `tools` is readonly), and one that tried to write would throw instead of changing later calls.
 */
const definitionsOf = new WeakMap<ToolRegistry, readonly ChatToolDefinition[]>();
const catalogs = new WeakMap<ToolRegistry, string>();

export function toolDefinitions(registry: ToolRegistry): readonly ChatToolDefinition[] {
  let definitions = definitionsOf.get(registry);
  if (definitions === undefined) {
    definitions = deepFreeze(registry.definitions());
    definitionsOf.set(registry, definitions);
  }
  return definitions;
}

/** The dual_agent event catalog of a registry's tools, rendered once per registry. */
export function eventCatalog(registry: ToolRegistry): string {
  let catalog = catalogs.get(registry);
  if (catalog === undefined) {
    catalog = renderEventCatalog(toolDefinitions(registry));
    catalogs.set(registry, catalog);
  }
  return catalog;
}
