import { runStoreBench } from "./store-bench.js";

/** `npm run bench`: every benchmark, each figure a ratio against a baseline measured in the same run. */
const figures = [...runStoreBench()];
const missed = figures.filter((figure) => !figure.met);
console.log(
  missed.length === 0
    ? "\nall targets met"
    : `\n${missed.length} target(s) missed: ${missed.map((figure) => figure.name).join("; ")}`,
);
