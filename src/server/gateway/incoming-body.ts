import type http from "node:http";
import type { IncomingMessage } from "node:http";
import type { UpstreamTap } from "./upstream-fetch.js";

/**
 * A response's body as a ReadableStream, listened to from the moment the head arrived: reads
 * (and the end, or a failure) that come before the stream is made wait for it. A connection lost
 * mid-body fails the stream only once the reads already queued are read: a tap has passed them
 * on, so the caller must get them too (erroring a stream drops what it holds).
 */
export class IncomingBody {
  #controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  #pending: Buffer[] = [];
  /** How the body ended before the stream was made: null (it goes on), true (its end), or why. */
  #over: { error: unknown; drained: boolean } | true | null = null;
  /** A failure held until the queued reads are read. */
  #cut: { error: unknown } | null = null;
  #closed = false;

  constructor(
    readonly incoming: IncomingMessage,
    readonly request: http.ClientRequest,
    tap: UpstreamTap | null,
    aborted: () => boolean,
    readonly done: () => void,
  ) {
    incoming.on("data", (piece: Buffer) => {
      if (this.#closed) return;
      tap?.bytes(piece);
      const stream = this.#controller;
      if (stream === null) {
        this.#pending.push(piece);
        return;
      }
      stream.enqueue(piece);
      // Backpressure, as fetch has it: a reader that stops reading stops the socket.
      if ((stream.desiredSize ?? 1) <= 0) incoming.pause();
    });
    incoming.once("end", () => {
      if (this.#closed) return;
      if (this.#controller === null) this.#over = true;
      else this.#controller.close();
      this.#closed = true;
      done();
    });
    // A connection lost mid-body: Node says so with an error, then a close.
    incoming.on("error", (error) => {
      if (aborted()) return;
      this.fail(new TypeError("terminated", { cause: error }));
    });
    incoming.once("close", () => {
      // Closed before its end: the connection was lost mid-body (undici says "terminated").
      if (incoming.complete) return;
      this.fail(new TypeError("terminated", { cause: new Error("other side closed") }));
    });
  }

  /**
   * The body fails with `error` (nothing more is read), unless it is over already: after the
   * queued reads (`drained`, a lost connection), or at once (the caller stopped it).
   */
  fail(error: unknown, { drained = true }: { drained?: boolean } = {}): void {
    if (this.#closed) return;
    this.#closed = true;
    const controller = this.#controller;
    if (controller === null) this.#over = { error, drained };
    // Nothing queued (the default high-water mark is one read): no read to wait for.
    else if (drained && (controller.desiredSize ?? 1) < 1) this.#cut = { error };
    else controller.error(error);
    this.done();
  }

  stream(): ReadableStream<Uint8Array> {
    const { incoming, request } = this;
    return new ReadableStream<Uint8Array>({
      start: (controller) => {
        const queued = this.#pending.length > 0;
        for (const piece of this.#pending) controller.enqueue(piece);
        this.#pending = [];
        const over = this.#over;
        if (over === true) controller.close();
        else if (over !== null && !(over.drained && queued)) controller.error(over.error);
        else {
          this.#controller = controller;
          if (over !== null) this.#cut = { error: over.error };
          if ((controller.desiredSize ?? 1) <= 0) incoming.pause();
        }
      },
      pull: (controller) => {
        // Called once the queue is empty: the held failure is the next thing read.
        if (this.#cut !== null) controller.error(this.#cut.error);
        else incoming.resume();
      },
      cancel: () => {
        this.#closed = true;
        this.#controller = null;
        this.#cut = null;
        this.done();
        // All of it arrived (the reader stopped at `[DONE]`): the connection serves the next call.
        if (incoming.complete) {
          incoming.resume();
          return;
        }
        // Left unread: the connection cannot serve another request.
        incoming.destroy();
        request.destroy();
      },
    });
  }
}
