import { type BfclAnswer, bfclToolName } from "../../domain/experiment.js";
import { assignCalls } from "../call-assignment.js";
import type { ParameterTypes } from "../parameter-types.js";
import { type BfclCall, checkBfclCall } from "./check-call.js";

export interface BfclVerdict {
  /** Answer entries served by a call that fits them. */
  matched: number;
  /** One line per problem, naming the call (by its position in the response) and why. */
  failures: string[];
}

/**
 * A model response's calls against a BFCL possible answer: as many calls as the answer has
 * entries, each entry served by its own fitting call, in any order. Where BFCL takes the first
 * call that fits each entry in turn, the lab finds the best assignment: a call that fits two
 * entries cannot make BFCL fail a response that has a fitting call for each (README, "Scoring
 * like BFCL").
 */
export function checkBfclTurn(
  answer: BfclAnswer,
  calls: readonly BfclCall[],
  types: ParameterTypes = {},
): BfclVerdict {
  const problems = answer.map((entry) =>
    calls.map((call) => checkBfclCall(entry, call, types[call.name])),
  );
  const fits = problems.map((row) =>
    row.flatMap((problem, index) => (problem === null ? [index] : [])),
  );
  const assignment = assignCalls(fits, calls.length);
  const failures: string[] = [];
  if (calls.length !== answer.length) {
    failures.push(
      `expected ${answer.length} call${answer.length === 1 ? "" : "s"} (${answer.map(nameOf).join(", ") || "none"}), the response made ${calls.length} (${calls.map((call) => call.name).join(", ") || "none"})`,
    );
  }
  const taken = new Set(assignment.filter((served) => served !== null));
  assignment.forEach((served, index) => {
    if (served !== null) return;
    const entry = answer[index] as BfclAnswer[number];
    const name = nameOf(entry);
    // Calls left over by the assignment are the ones this entry could have had.
    const free = calls.flatMap((call, at) => (call.name === name && !taken.has(at) ? [at] : []));
    const at = free[0];
    if (at !== undefined) {
      const problem = problems[index]?.[at] ?? "does not fit";
      failures.push(`${name}: call ${at + 1} ${describeCall(calls[at])}: ${problem}`);
    } else if (calls.length === answer.length) {
      const fitsTaken = (problems[index] ?? []).indexOf(null);
      failures.push(
        fitsTaken === -1
          ? `no call to ${name}`
          : `${name}: call ${fitsTaken + 1} fits, but it answers another entry; no call of its own`,
      );
    }
    // Otherwise the wrong count, reported above, says it.
  });
  return { matched: assignment.filter((served) => served !== null).length, failures };
}

const nameOf = (entry: BfclAnswer[number]): string => bfclToolName(Object.keys(entry)[0] ?? "");

/** The call's arguments as the model wrote them (`10.0` stays `10.0`), else as parsed. */
function describeCall(call: BfclCall | undefined): string {
  if (call === undefined) return "";
  return call.raw_arguments ?? JSON.stringify(call.arguments);
}
