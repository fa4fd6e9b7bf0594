import { describe, expect, it } from 'vitest';
import { DatabaseFault } from '../../src/idb/database.ts';
import { WriteGate } from '../../src/runtime/node/idb/write-gate.ts';

describe('WriteGate (one SQLite writer at a time in this process)', () => {
  it('lets writers in one at a time, in the order they came, each as soon as the previous one leaves', async () => {
    const gate = new WriteGate();
    const order: string[] = [];
    const leaveFirst = await gate.enter(1000);
    const second = gate.enter(1000).then((leave) => {
      order.push('second');
      return leave;
    });
    const third = gate.enter(1000).then((leave) => {
      order.push('third');
      return leave;
    });
    await Promise.resolve();
    expect(order).toEqual([]);
    leaveFirst();
    leaveFirst(); // a second call does not let two in
    const leaveSecond = await second;
    expect(order).toEqual(['second']);
    leaveSecond();
    (await third)();
    expect(order).toEqual(['second', 'third']);
    (await gate.enter(10))(); // free again
  });

  it('faults Timeout ("database is locked") after the busy time-out, and the writer is no longer queued', async () => {
    const gate = new WriteGate();
    const leave = await gate.enter(1000);
    const refused = await gate.enter(20).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DatabaseFault);
    expect(refused).toMatchObject({ fault: 'Timeout', message: expect.stringMatching(/database is locked/) });
    leave();
    (await gate.enter(10))();
  });

  it('refuses everyone waiting when the database closes', async () => {
    const gate = new WriteGate();
    await gate.enter(1000);
    const waiting = gate.enter(1000).catch((e: unknown) => e);
    gate.refuseAll(new DatabaseFault('SqlError', 'closed', true));
    expect(await waiting).toMatchObject({ fault: 'SqlError', message: 'closed' });
  });
});
