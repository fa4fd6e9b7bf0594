import { createApp } from '../../src/app.ts';
import { readHttpConfig, type Environment } from '../../src/config.ts';
import type { PdfEngine } from '../../src/pdf/engine/port.ts';
import { PdfiumEngine } from '../../src/pdf/engine/pdfium.ts';
import type { LogLevel } from '../../src/ports.ts';
import { loadPdfiumWasm, nodeDeps } from '../../src/runtime/node/deps.ts';

let wasm: Promise<WebAssembly.Module> | undefined;
export const pdfiumWasm = (): Promise<WebAssembly.Module> => (wasm ??= loadPdfiumWasm());

export interface TestApp {
  app: ReturnType<typeof createApp>;
  logs: { level: LogLevel; message: string; fields?: Record<string, unknown> }[];
  engine: PdfEngine;
}

/** The real app with the real engine in process; logs are collected instead of printed. */
export async function testApp(env: Environment = {}, engine?: PdfEngine): Promise<TestApp> {
  const config = readHttpConfig(env);
  const used = engine ?? new PdfiumEngine({ wasm: await pdfiumWasm(), memoryLimitBytes: config.pdfEngineMemoryBytes });
  const logs: TestApp['logs'] = [];
  const deps = { ...nodeDeps(config, used), logger: { log: (level: LogLevel, message: string, fields?: Record<string, unknown>) => void logs.push({ level, message, fields }) } };
  return { app: createApp(deps), logs, engine: used };
}

export const postJson = (app: TestApp['app'], path: string, body: unknown, headers: Record<string, string> = {}) =>
  app.request(path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
