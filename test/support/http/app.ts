import { expect } from 'vitest';
import { createApp, type AppDeps } from '../../../src/app.ts';
import { readHttpConfig, type Environment } from '../../../src/config.ts';
import { readEndpointConfig } from '../../../src/idb/config.ts';
import type { PdfEngine } from '../../../src/pdf/engine/port.ts';
import type { LogLevel } from '../../../src/ports.ts';
import {
  inProcessEngines,
  loadEngineModules,
  serverDeps,
  type EngineModules,
} from '../../../src/runtime/shared/deps.ts';

let modules: Promise<EngineModules> | undefined;
export const engineModules = (): Promise<EngineModules> => (modules ??= loadEngineModules());

export interface TestApp {
  app: ReturnType<typeof createApp>;
  logs: { level: LogLevel; message: string; fields?: Record<string, unknown> }[];
  engine: PdfEngine;
}

/** Overrides of the real engines, for tests of failure paths. */
export type EngineOverrides = Partial<Pick<AppDeps, 'engine' | 'qr' | 'engineStats'>>;

/** The real app with the real engines in process; logs are collected instead of printed. */
export async function testApp(env: Environment = {}, overrides: EngineOverrides = {}): Promise<TestApp> {
  const config = readHttpConfig(env);
  const engines = { ...(await inProcessEngines(config)), ...overrides };
  const logs: TestApp['logs'] = [];
  const deps = {
    ...serverDeps(config, readEndpointConfig(env), engines),
    logger: {
      log: (level: LogLevel, message: string, fields?: Record<string, unknown>) =>
        void logs.push({ level, message, fields }),
    },
  };
  return { app: createApp(deps), logs, engine: engines.engine };
}

export const postJson = (app: TestApp['app'], path: string, body: unknown, headers: Record<string, string> = {}) =>
  app.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** Asserts a problem-details answer (status, media type, the stable type URI, title, detail, traceId) and returns it. */
export async function problem(res: Response, status: number, type: string) {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ type: `https://errors.example/problems/${type}`, status });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(body.traceId).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-00$/);
  return body;
}
