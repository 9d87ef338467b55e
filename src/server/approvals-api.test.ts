import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TurnEvent } from "../domain/turn-events.js";
import { startTestServer, type TestServer, turnEventsOf, waitFor } from "./test-fixtures.js";

/** Reads an SSE response as it comes, so a test can act while the turn waits. */
function eventReader(response: Response) {
  const reader = response.body?.getReader();
  if (reader === undefined) throw new Error("no body");
  const decoder = new TextDecoder();
  let text = "";
  return {
    async until(match: (event: TurnEvent) => boolean): Promise<TurnEvent[]> {
      for (;;) {
        const events = turnEventsOf(text.slice(0, text.lastIndexOf("\n\n") + 2));
        if (events.some(match)) return events;
        const { done, value } = await reader.read();
        if (done) return turnEventsOf(text);
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

describe("HTTP API: approvals", () => {
  let lab: TestServer;
  beforeEach(async () => {
    lab = await startTestServer();
  });
  afterEach(() => lab.close());

  const startTurn = async (mode: "chat_agent_tools" | "dual_agent", message: string) => {
    const id = lab.store.createSession({ title: "t", config: { tool_invocation_mode: mode } });
    const response = await lab.api(`/api/sessions/${id}/turns`, {
      method: "POST",
      json: { message },
    });
    expect(response.status).toBe(200);
    return { id, events: eventReader(response) };
  };
  const decide = (id: string, callId: string, json: unknown) =>
    lab.api(`/api/sessions/${id}/approvals/${callId}`, { method: "POST", json });

  it.each(["chat_agent_tools", "dual_agent"] as const)(
    "the stream shows the waiting call, the API lists it and approves it with edited arguments (%s)",
    async (mode) => {
      const { id, events } = await startTurn(mode, "file a ticket about the login page");
      const seen = await events.until((event) => event.type === "approval_required");
      const required = seen.find((event) => event.type === "approval_required");
      if (required?.type !== "approval_required") throw new Error("no approval_required");
      expect(required).toMatchObject({
        event_name: "mock_ticket",
        arguments: { title: "the login page" },
      });
      const listed = await lab.api(`/api/sessions/${id}/approvals`);
      expect(await listed.json()).toMatchObject({
        approvals: [
          { call_id: required.event_id, event_name: "mock_ticket", turn_index: 1, session_id: id },
        ],
      });

      expect((await decide(id, required.event_id, { decision: "maybe" })).status).toBe(400);
      const denyWithArgs = await decide(id, required.event_id, {
        decision: "deny",
        arguments: { title: "x" },
      });
      expect(denyWithArgs.status).toBe(400);
      expect(await denyWithArgs.text()).toMatch(/arguments/);
      expect((await decide(id, "no_such_call", { decision: "approve" })).status).toBe(404);

      const approved = await decide(id, required.event_id, {
        decision: "approve",
        arguments: { title: "the login page (edited)" },
      });
      expect(approved.status).toBe(200);
      const again = await decide(id, required.event_id, { decision: "deny" });
      expect(again.status).toBe(409);
      expect(await again.json()).toMatchObject({ error: { code: "approval_decided" } });

      const all = await events.until((event) => event.type === "turn_end");
      expect(all.find((event) => event.type === "approval_decided")).toMatchObject({
        decision: "approve",
        decided_by: "user",
        arguments: { title: "the login page (edited)" },
      });
      const result = all.find((event) => event.type === "tool_result");
      expect(result).toMatchObject({ ok: true });
      expect(result?.type === "tool_result" && result.content).toContain("(edited)");
      expect(all.at(-1)).toMatchObject({ type: "turn_end", status: "completed" });
      const listedAfter = await lab.api(`/api/sessions/${id}/approvals`);
      expect(await listedAfter.json()).toEqual({ approvals: [] });
      // The call is finished: answering it now is 409 (decided), never a second run.
      expect((await decide(id, required.event_id, { decision: "approve" })).status).toBe(409);
      const audit = lab.store.listAuditLogs(id).find((row) => row.event === "approval_decided");
      expect(audit?.details).toMatchObject({ decision: "approve", decided_by: "user" });
    },
  );

  it("a denial reaches the model as a tool error with the user's reason", async () => {
    const { id, events } = await startTurn("dual_agent", "file a ticket about the login page");
    const seen = await events.until((event) => event.type === "approval_required");
    const required = seen.find((event) => event.type === "approval_required");
    if (required?.type !== "approval_required") throw new Error("no approval_required");
    const denied = await decide(id, required.event_id, { decision: "deny", reason: "duplicate" });
    expect(denied.status).toBe(200);
    const all = await events.until((event) => event.type === "turn_end");
    expect(all.find((event) => event.type === "tool_result")).toMatchObject({
      ok: false,
      content: JSON.stringify({ error: "the user denied this call: duplicate" }),
    });
  });

  it("a client that disconnects while a call waits cancels the turn and withdraws the call", async () => {
    const id = lab.store.createSession({
      title: "t",
      config: { tool_invocation_mode: "dual_agent" },
    });
    const controller = new AbortController();
    const response = await lab.api(`/api/sessions/${id}/turns`, {
      method: "POST",
      json: { message: "file a ticket about the login page" },
      signal: controller.signal,
    });
    const seen = await eventReader(response).until((event) => event.type === "approval_required");
    const required = seen.find((event) => event.type === "approval_required");
    if (required?.type !== "approval_required") throw new Error("no approval_required");
    controller.abort();
    await waitFor(() => lab.store.listTurns(id)[0]?.status === "cancelled");
    expect(await (await lab.api(`/api/sessions/${id}/approvals`)).json()).toEqual({
      approvals: [],
    });
    expect((await decide(id, required.event_id, { decision: "approve" })).status).toBe(404);
    const tool = lab.store.listMessages(id).find((message) => message.role === "tool");
    expect(tool?.content).toMatch(/interrupted/);
    expect(lab.store.listAuditLogs(id).map((row) => row.event)).toContain("approval_interrupted");
  });

  it("unknown session → 404", async () => {
    expect((await lab.api("/api/sessions/nope/approvals")).status).toBe(404);
    expect((await decide("nope", "call", { decision: "approve" })).status).toBe(404);
  });
});
