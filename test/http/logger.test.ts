/** The JSON-lines logger: time, level and msg first, then the fields; below the level nothing is written. */
import { describe, expect, it } from 'vitest';
import { jsonLogger } from '../../src/logger.ts';

const at = new Date('2026-11-27T10:00:00.123Z');

function lines(level: Parameters<typeof jsonLogger>[0], log: (logger: ReturnType<typeof jsonLogger>) => void) {
  const out: string[] = [];
  log(
    jsonLogger(
      level,
      (line) => out.push(line),
      () => at,
    ),
  );
  return out;
}

describe('jsonLogger', () => {
  it('writes time, level and msg, then the fields in their order', () => {
    const [line] = lines('info', (l) =>
      l.log('info', 'call', { connectionId: 'c-1', caller: 'DOMAIN\\user "x"', ms: 0.4, skipped: undefined }),
    );
    expect(line).toBe(
      '{"time":"2026-11-27T10:00:00.123Z","level":"info","msg":"call","connectionId":"c-1","caller":"DOMAIN\\\\user \\"x\\"","ms":0.4}',
    );
    expect(JSON.parse(line!)).toEqual({
      time: '2026-11-27T10:00:00.123Z',
      level: 'info',
      msg: 'call',
      connectionId: 'c-1',
      caller: 'DOMAIN\\user "x"',
      ms: 0.4,
    });
  });

  it('writes a line without fields, or with none defined, as time, level and msg only', () => {
    expect(lines('debug', (l) => l.log('warn', 'a "quoted"\nmessage'))).toEqual([
      '{"time":"2026-11-27T10:00:00.123Z","level":"warn","msg":"a \\"quoted\\"\\nmessage"}',
    ]);
    expect(lines('debug', (l) => l.log('error', 'x', { gone: undefined }))).toEqual([
      '{"time":"2026-11-27T10:00:00.123Z","level":"error","msg":"x"}',
    ]);
  });

  it('writes nothing below its level', () => {
    expect(lines('warn', (l) => l.log('info', 'call', { ms: 1 }))).toEqual([]);
  });
});
