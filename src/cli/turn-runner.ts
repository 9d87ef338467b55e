import type { Command } from "commander";
import type { LabProviders } from "../composition/lab-providers.js";
import type { ApprovalPolicy, Approver } from "../domain/approvals.js";
import type { SessionStore } from "../store/session-store.js";
import { approvalPolicyOf, cliApprover, stdinAsker } from "./approval-prompt.js";
import type { CommandContext } from "./command-context.js";
import { openStoreForWriting } from "./database-path.js";

/** What a command that runs turns of a stored session works with (`replay`, `retry`). */
export interface TurnRunner {
  store: SessionStore;
  providers: LabProviders;
  /** Aborted by Ctrl-C: the running turn is cancelled and stored. */
  signal: AbortSignal;
  approve: Approver;
}

/** Opens the store and the providers, runs `work`, and closes everything however it ended. */
export async function withTurnRunner(
  context: CommandContext,
  command: Command,
  policy: ApprovalPolicy | undefined,
  work: (runner: TurnRunner) => Promise<void>,
): Promise<void> {
  const { io } = context;
  const providers = context.providers(command);
  let store: SessionStore;
  try {
    store = await openStoreForWriting(context.database(command), io.stderr);
  } catch (error) {
    await providers.tools.close();
    throw error;
  }
  const controller = new AbortController();
  const onSignal = () => controller.abort(new Error("cancelled by SIGINT"));
  process.on("SIGINT", onSignal);
  const asker = stdinAsker(io);
  try {
    const approve = cliApprover(approvalPolicyOf(policy, io), () => asker.ask);
    await work({ store, providers, signal: controller.signal, approve });
  } finally {
    process.off("SIGINT", onSignal);
    asker.close();
    await store.close();
    await providers.tools.close();
  }
}
