/**
 * tcp-bridge/src/reply-polling.ts on a clock and a loop of the test's own: when the loop is kept turning after a
 * reply, for how long, and when it is not (a client that pauses, a second client calling, polling off). The bench
 * measures what it gains (docs/decisions/idb-sqlite-backend.md).
 */
import { describe, expect, it } from 'vitest';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { loadCpuYield } from '../../tcp-bridge/src/cpu-yield.ts';
import { replyPolling } from '../../tcp-bridge/src/reply-polling.ts';

/** A loop whose turns run when the test says: `pending` steps wait for `runTurn`. */
function fakeLoop(windowMs: number) {
  let now = 0;
  let pending: (() => void)[] = [];
  let turns = 0;
  let yields = 0;
  const polling = replyPolling(
    windowMs,
    () => now,
    (step) => void pending.push(step),
    () => void yields++,
  );
  return {
    polling,
    advance(ms: number) {
      now += ms;
    },
    get turning() {
      return pending.length > 0;
    },
    get turns() {
      return turns;
    },
    /** How often the polling let another thread on its CPU run first. */
    get yields() {
      return yields;
    },
    /** Runs one turn of the loop, `ms` after the last. */
    runTurn(ms = 0) {
      now += ms;
      const steps = pending;
      pending = [];
      for (const step of steps) {
        turns++;
        step();
      }
    },
  };
}

describe('polling after a reply', () => {
  it('keeps the loop turning for the window after a reply to a client that called again within it', () => {
    const loop = fakeLoop(0.2);
    const connection = loop.polling.connection();
    connection.received(); // the first request: no reply before it
    connection.replied();
    expect(loop.turning).toBe(false); // nothing known of this client yet
    loop.advance(0.05);
    connection.received(); // 50 µs after the reply: a chatty client
    connection.replied();
    expect(loop.turning).toBe(true);
    loop.runTurn(0.1);
    expect(loop.turning).toBe(true); // 100 µs after the reply: still within the window
    loop.runTurn(0.11);
    expect(loop.turning).toBe(false); // 210 µs: stopped
    expect(loop.turns).toBe(2);
    // Every turn that goes on polling first lets a thread waiting for this CPU run; the last one, past the window,
    // does not.
    expect(loop.yields).toBe(1);
  });

  it('stops polling for a client that paused longer than the window', () => {
    const loop = fakeLoop(0.2);
    const connection = loop.polling.connection();
    connection.received();
    connection.replied();
    loop.advance(0.05);
    connection.received();
    connection.replied();
    loop.runTurn(0.3); // the window ends
    expect(loop.turning).toBe(false);
    loop.advance(5); // 5 ms of thought
    connection.received();
    connection.replied();
    expect(loop.turning).toBe(false);
  });

  it('judges a request by its first bytes only', () => {
    const loop = fakeLoop(0.2);
    const connection = loop.polling.connection();
    connection.replied();
    loop.advance(1);
    connection.received(); // 1 ms after the reply: not chatty
    loop.advance(0.01);
    connection.received(); // the same request's next chunk, 10 µs on: not judged again
    connection.replied();
    expect(loop.turning).toBe(false);
  });

  it('does not poll for a client while another one is being answered', () => {
    const loop = fakeLoop(0.2);
    const first = loop.polling.connection();
    first.replied();
    loop.advance(0.01);
    first.received();
    first.replied(); // calling alone
    expect(loop.turning).toBe(true);
    loop.runTurn(0.25);
    expect(loop.turning).toBe(false);
    const second = loop.polling.connection();
    second.replied(); // its preamble's answer
    loop.advance(0.01);
    second.received();
    first.received();
    first.replied(); // 10 µs after the second one's reply
    expect(loop.turning).toBe(false);
    loop.advance(0.01);
    second.replied(); // 10 µs after the first one's
    expect(loop.turning).toBe(false);
    loop.advance(1); // the first client has gone quiet; the second calls alone again
    second.received();
    second.replied();
    expect(loop.turning).toBe(false); // its last request came 1 ms after the reply before it
    loop.advance(0.05);
    second.received();
    second.replied();
    expect(loop.turning).toBe(true);
  });

  it('never polls with a window of 0, and the setting is read in microseconds', () => {
    const loop = fakeLoop(0);
    const connection = loop.polling.connection();
    for (let i = 0; i < 3; i++) {
      connection.replied();
      connection.received();
    }
    connection.replied();
    expect(loop.turning).toBe(false);
    expect(loop.yields).toBe(0);
    expect(readBridgeConfig({}).pollAfterReplyMs).toBe(0.2);
    expect(readBridgeConfig({ BRIDGE_POLL_AFTER_REPLY_US: '0' }).pollAfterReplyMs).toBe(0);
    expect(() => readBridgeConfig({ BRIDGE_POLL_AFTER_REPLY_US: '20000' })).toThrow(/BRIDGE_POLL_AFTER_REPLY_US/);
  });

  it("lets the system's other threads go first through the platform's call (sched_yield), where there is one", () => {
    const yieldCpu = loadCpuYield();
    if (process.platform === 'linux' || process.platform === 'darwin' || process.platform === 'win32') {
      expect(yieldCpu).toBeTypeOf('function');
      for (let i = 0; i < 1000; i++) yieldCpu!();
    }
    expect(loadCpuYield('aix')).toBeUndefined();
  });
});
