import type { LogLevel } from './ports.ts';

/** Settings of the HTTP service (names from spec/RUN.md), read from whatever environment the runtime has. */
export interface HttpConfig {
  port: number;
  host: string;
  logLevel: LogLevel;
  maxBodyBytes: number;
  pdfTimeoutMs: number;
  /** Ceiling on the PDF engine's WebAssembly heap. */
  pdfEngineMemoryBytes: number;
  /** Base of problem `type` URIs; each type is this followed by its name. */
  problemTypeBase: string;
}

export type Environment = Record<string, string | undefined>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const MiB = 1024 * 1024;

/** LOG_LEVEL, shared by the HTTP service and the bridge. */
export function readLogLevel(env: Environment): LogLevel {
  const logLevel = env.LOG_LEVEL ?? 'info';
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be debug, info, warn or error, not "${logLevel}"`);
  return logLevel as LogLevel;
}

export function readHttpConfig(env: Environment, defaults: Partial<HttpConfig> = {}): HttpConfig {
  const logLevel = readLogLevel(env);
  const problemTypeBase = env.PROBLEM_TYPE_BASE ?? 'https://errors.example/problems/';
  if (!/^[a-z][a-z0-9+.-]*:\/\/.+\/problems\/$/i.test(problemTypeBase)) throw new ConfigError('PROBLEM_TYPE_BASE must be an absolute URI ending in /problems/');
  return {
    port: integer(env, 'PORT', defaults.port ?? 3000, 0, 65535),
    host: env.HOST ?? defaults.host ?? '127.0.0.1',
    logLevel,
    maxBodyBytes: integer(env, 'MAX_BODY_MB', (defaults.maxBodyBytes ?? 64 * MiB) / MiB, 1, 4096) * MiB,
    pdfTimeoutMs: integer(env, 'PDF_TIMEOUT_MS', defaults.pdfTimeoutMs ?? 10000, 100, 600000),
    pdfEngineMemoryBytes: integer(env, 'PDF_ENGINE_MEMORY_MB', (defaults.pdfEngineMemoryBytes ?? 256 * MiB) / MiB, 32, 2047) * MiB,
    problemTypeBase,
  };
}

export function integer(env: Environment, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, not "${raw}"`);
  return n;
}
