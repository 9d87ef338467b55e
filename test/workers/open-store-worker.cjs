// A worker thread that opens the built store the moment all its siblings are ready, so eight
// migrations of one legacy file start together (the seed's Barrier, without monkeypatching).
const { parentPort, workerData } = require("node:worker_threads");

(async () => {
  const { SqliteSessionStore } = await import(workerData.moduleUrl);
  const barrier = new Int32Array(workerData.barrier);
  if (Atomics.add(barrier, 0, 1) + 1 === workerData.count) {
    Atomics.store(barrier, 1, 1);
    Atomics.notify(barrier, 1);
  } else {
    Atomics.wait(barrier, 1, 0, 10_000);
  }
  try {
    const store = new SqliteSessionStore(workerData.path);
    const messages = store.listMessages("legacy");
    store.close();
    parentPort.postMessage({ ok: true, messages });
  } catch (error) {
    parentPort.postMessage({ ok: false, error: `${error.code ?? ""} ${error.message}` });
  }
})();
