/**
 * The Workers entry reads its settings from the Worker's environment ([vars], secrets) on the first request. A fresh
 * instance of the module is imported here, so these tests do not share the isolate's app with SELF.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';

const ctx = { waitUntil: () => {}, passThroughOnException: () => {}, props: {} };

async function freshWorker() {
  vi.resetModules();
  return (await import('../../../src/runtime/workers/main.ts')).default;
}

describe('Workers entry configuration', () => {
  afterEach(() => vi.restoreAllMocks());

  it('answers 500 and logs the setting when the configuration is invalid', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const worker = await freshWorker();
    const response = await worker.fetch(new Request('http://localhost/health'), { LOG_LEVEL: 'loud' }, ctx);
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(JSON.parse(log.mock.calls[0]![0] as string)).toMatchObject({
      level: 'error',
      msg: 'invalid configuration',
      message: expect.stringContaining('LOG_LEVEL'),
    });
  });

  it('takes its settings from the environment (PROBLEM_TYPE_BASE, LOG_LEVEL)', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const worker = await freshWorker();
    const env = { LOG_LEVEL: 'debug', PROBLEM_TYPE_BASE: 'https://docs.example.ch/problems/', HOST: '127.0.0.1' };
    const response = await worker.fetch(new Request('http://localhost/nope'), env, ctx);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { type: string }).type).toBe('https://docs.example.ch/problems/not-found');
    const line = JSON.parse(log.mock.calls[0]![0] as string) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'info', msg: 'request', method: 'GET', path: '/nope', status: 404 });
  });
});
