/**
 * The event loop kept turning for a moment after a reply, while a client calls again at once.
 *
 * Why: a chatty client (one call after another on a channel, as a legacy client's INSERTs in a database request are)
 * sends its next request tens of microseconds after it reads a reply. An event loop that blocks in epoll_wait in
 * between is asleep when it comes: on a virtual machine whose idle vCPU halts, waking it is a VM exit and a trip
 * through the host's scheduler before the bridge reads a byte. .NET's thread pool (so CoreWCF, and the WCF client)
 * spins for a while before it blocks, for the same reason. Here the loop polls without blocking (a pending
 * setImmediate makes libuv's poll phase use a zero timeout) for `windowMs` after a reply, only on a connection whose
 * previous request came within that window of the reply before it, and only while no other connection has been
 * answered within it (a client calling alone: with several, the polling would take a core from them). A client that
 * pauses longer costs nothing, one that stops costs at most one window. Measured (docs/decisions/idb-sqlite-backend.md,
 * "2026-11-28 (third session): polling after a reply"): ExecuteNonQuery in a request on one channel, .NET client,
 * median +37% calls per second over eight alternating rounds in one run, 0.81× → 0.90× CoreWCF in another; Heartbeat
 * on eight channels unchanged; for the CPU of the polling.
 *
 * Each turn of the polling first lets any other thread waiting for this CPU run (`yieldCpu`, sched_yield: see
 * cpu-yield.ts). A socket's wake-up places the thread it wakes on the waker's CPU, so the client's thread that reads
 * the reply often lands on the bridge's; the scheduler lets the running thread finish its slice first, and without
 * the yield that thread waited the window out (`perf sched`: 0.22–0.27 ms). Measured (the decision record, "eighth
 * session"; one channel, .NET client, 16 alternating rounds): a round's p99 0.07–0.28 ms against 0.25–0.38 ms without
 * the yield; ExecuteNonQuery in a request 17 800 calls/s in mean against 16 500, Heartbeat 21 300 against 21 300.
 */

/** What a connection tells the polling: a request's bytes came, a reply went out. */
export interface ConnectionPolling {
  received(): void;
  replied(): void;
}

export interface ReplyPolling {
  /** A connection's view; `windowMs` 0 gives one that does nothing. */
  connection(): ConnectionPolling;
}

const IDLE: ConnectionPolling = { received() {}, replied() {} };

/**
 * One per bridge (startBridge), over the process's one event loop: `clock` in milliseconds and `turn` (setImmediate)
 * are the loop's, passed in for the tests; `yieldCpu` is the platform's sched_yield, where koffi can reach it.
 */
export function replyPolling(
  windowMs: number,
  clock: () => number = () => performance.now(),
  turn: (step: () => void) => void = (step) => void setImmediate(step),
  yieldCpu?: () => void,
): ReplyPolling {
  let until = 0;
  let turning = false;
  /** The connection that wrote the last reply, and when: polling is for a client calling alone. */
  let lastReplier: ConnectionPolling | undefined;
  let lastReplyAt = Number.NEGATIVE_INFINITY;
  const step = () => {
    if (clock() < until) {
      yieldCpu?.();
      turn(step);
    } else turning = false;
  };
  const keepTurning = (now: number) => {
    until = Math.max(until, now + windowMs);
    if (!turning) {
      turning = true;
      turn(step);
    }
  };
  return {
    connection() {
      if (windowMs <= 0) return IDLE;
      /** When the last reply went out, until a request's first bytes come (NaN: not waiting for one). */
      let repliedAt = Number.NaN;
      let chatty = false;
      const self: ConnectionPolling = {
        received() {
          if (Number.isNaN(repliedAt)) return; // the same request's later chunks, or bytes before any reply
          chatty = clock() - repliedAt <= windowMs;
          repliedAt = Number.NaN;
        },
        replied() {
          const now = clock();
          repliedAt = now;
          const alone = lastReplier === self || now - lastReplyAt > windowMs;
          lastReplier = self;
          lastReplyAt = now;
          if (chatty && alone) keepTurning(now);
        },
      };
      return self;
    },
  };
}
