/**
 * Settings the HTTP service reads from its environment (src/config.ts), where the README promises that an invalid
 * value stops the service with a message naming the variable: PDF_WORKERS, which src/runtime/node/main.ts used to read
 * itself (`Number(...) || undefined`, so `PDF_WORKERS=abc` quietly meant one worker per core).
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, readHttpConfig } from '../../src/config.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');

describe('PDF_WORKERS', () => {
  it('is a whole number from 1 to 256, left to the runtime when unset', () => {
    expect(readHttpConfig({}).pdfWorkers).toBeUndefined();
    expect(readHttpConfig({ PDF_WORKERS: '' }).pdfWorkers).toBeUndefined();
    expect(readHttpConfig({ PDF_WORKERS: '4' }).pdfWorkers).toBe(4);
    for (const bad of ['0', 'abc', '2.5', '-1', '257'])
      expect(() => readHttpConfig({ PDF_WORKERS: bad }), bad).toThrow(
        new ConfigError(`PDF_WORKERS must be a whole number from 1 to 256, not "${bad}"`),
      );
  });

  it('stops `npm start` (src/runtime/node/main.ts) when invalid, naming the variable, before anything listens', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/runtime/node/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, PDF_WORKERS: 'abc', PORT: '0', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
    expect(code).not.toBe(0);
    expect(output).toContain('PDF_WORKERS must be a whole number from 1 to 256, not "abc"');
    expect(output).not.toContain('listening');
  }, 60_000);
});
