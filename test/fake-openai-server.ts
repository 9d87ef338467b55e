// The fake endpoint ships with the package (agent-lab/testing); the lab's own tests use it here.
export * from "../src/testing/fake-openai-server.js";
