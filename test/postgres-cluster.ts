// The cluster lives in src/testing so the benchmarks (built from src/) start one too.
export * from "../src/testing/postgres-cluster.js";
