import type { LogLevel } from './ports.ts';

/**
 * Settings of the HTTP service (names from docs/contract/operations.md), read from whatever environment the runtime
 * has.
 */
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
  /** MAX_INFLIGHT_MB: request bodies being read or worked on at once; beyond it 503 `overloaded`. */
  maxInflightBytes: number;
  /** QUEUE_TIMEOUT_MS: longest a document waits for a PDF engine; then 503 `overloaded`. */
  queueTimeoutMs: number;
  /** PDF_WORKERS: PDF worker threads where the runtime has them (Node); unset, the runtime decides (one per core). */
  pdfWorkers?: number;
  auth: AuthConfig;
}

/** Who may call the document endpoints and /metrics (docs/contract/http.md, "Running in production"). */
export interface AuthConfig {
  /**
   * API keys, `name:sha256hex` lines: from the file API_KEYS_FILE (read by the runtime's adapter), or the list itself
   * in API_KEYS (the Workers secret binding, which has no file system).
   */
  apiKeys?: { from: 'file'; path: string } | { from: 'text'; text: string };
  /** AUTH_JWKS_URL with AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE: bearer JWTs of an OpenID Connect provider. */
  jwt?: { jwksUrl: string; issuer: string; audience: string };
  /** AUTH=none: no authentication, said explicitly. */
  none: boolean;
}

export type Environment = Record<string, string | undefined>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const MiB = 1024 * 1024;

/** LOG_LEVEL, shared by the HTTP service and the bridge. */
export function readLogLevel(env: Environment): LogLevel {
  const logLevel = env.LOG_LEVEL ?? 'info';
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel))
    throw new ConfigError(`LOG_LEVEL must be debug, info, warn or error, not "${logLevel}"`);
  return logLevel as LogLevel;
}

export function readHttpConfig(env: Environment, defaults: Partial<HttpConfig> = {}): HttpConfig {
  const logLevel = readLogLevel(env);
  const problemTypeBase = env.PROBLEM_TYPE_BASE ?? 'https://errors.example/problems/';
  if (!/^[a-z][a-z0-9+.-]*:\/\/.+\/problems\/$/i.test(problemTypeBase))
    throw new ConfigError('PROBLEM_TYPE_BASE must be an absolute URI ending in /problems/');
  const host = env.HOST || (defaults.host ?? '127.0.0.1');
  const maxBodyBytes = integer(env, 'MAX_BODY_MB', (defaults.maxBodyBytes ?? 64 * MiB) / MiB, 1, 4096) * MiB;
  return {
    port: integer(env, 'PORT', defaults.port ?? 3000, 0, 65535),
    host,
    logLevel,
    maxBodyBytes,
    pdfTimeoutMs: integer(env, 'PDF_TIMEOUT_MS', defaults.pdfTimeoutMs ?? 10000, 100, 600000),
    pdfEngineMemoryBytes:
      integer(env, 'PDF_ENGINE_MEMORY_MB', (defaults.pdfEngineMemoryBytes ?? 256 * MiB) / MiB, 32, 2047) * MiB,
    problemTypeBase,
    ...readLimits(env, maxBodyBytes),
    ...(env.PDF_WORKERS ? { pdfWorkers: integer(env, 'PDF_WORKERS', 1, 1, 256) } : {}),
    auth: readAuth(env, host),
  };
}

function readLimits(env: Environment, maxBodyBytes: number): Pick<HttpConfig, 'maxInflightBytes' | 'queueTimeoutMs'> {
  const maxInflightBytes = integer(env, 'MAX_INFLIGHT_MB', Math.max(512, maxBodyBytes / MiB), 1, 1048576) * MiB;
  // A body the service accepts must be able to get in at all, when nothing else is in flight.
  if (maxInflightBytes < maxBodyBytes)
    throw new ConfigError(
      `MAX_INFLIGHT_MB (${maxInflightBytes / MiB}) must be at least MAX_BODY_MB (${maxBodyBytes / MiB})`,
    );
  return { maxInflightBytes, queueTimeoutMs: integer(env, 'QUEUE_TIMEOUT_MS', 30000, 1, 3600000) };
}

/** 127.0.0.0/8, ::1 and localhost: only this machine can reach the service. */
function isLoopback(host: string): boolean {
  return /^127(\.\d{1,3}){3}$/.test(host) || ['localhost', '::1', '[::1]'].includes(host.toLowerCase());
}

function readAuth(env: Environment, host: string): AuthConfig {
  const set = (name: string) => (env[name] ?? '') !== '';
  const mode = env.AUTH ?? '';
  if (mode !== '' && mode !== 'none') throw new ConfigError(`AUTH must be none or left unset, not "${mode}"`);
  if (set('API_KEYS_FILE') && set('API_KEYS')) throw new ConfigError('Set API_KEYS_FILE or API_KEYS, not both');
  const apiKeys: AuthConfig['apiKeys'] = set('API_KEYS_FILE')
    ? { from: 'file', path: env.API_KEYS_FILE! }
    : set('API_KEYS')
      ? { from: 'text', text: env.API_KEYS! }
      : undefined;
  let jwt: AuthConfig['jwt'];
  if (set('AUTH_JWKS_URL')) {
    const jwksUrl = env.AUTH_JWKS_URL!;
    if (!URL.canParse(jwksUrl) || !['https:', 'http:'].includes(new URL(jwksUrl).protocol))
      throw new ConfigError(`AUTH_JWKS_URL must be an http(s) URL, not "${jwksUrl}"`);
    // Without both, a token the provider issued to any other application would be accepted here.
    const missing = ['AUTH_JWT_ISSUER', 'AUTH_JWT_AUDIENCE'].filter((name) => !set(name));
    if (missing.length > 0) throw new ConfigError(`AUTH_JWKS_URL needs ${missing.join(' and ')} too`);
    jwt = { jwksUrl, issuer: env.AUTH_JWT_ISSUER!, audience: env.AUTH_JWT_AUDIENCE! };
  } else if (set('AUTH_JWT_ISSUER') || set('AUTH_JWT_AUDIENCE')) {
    throw new ConfigError('AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE need AUTH_JWKS_URL');
  }
  const none = mode === 'none';
  if (none && (apiKeys || jwt))
    throw new ConfigError('AUTH=none contradicts API_KEYS_FILE / AUTH_JWKS_URL: set one or the other');
  if (!none && !apiKeys && !jwt && !isLoopback(host)) {
    throw new ConfigError(
      `HOST=${host} is not a loopback address, so callers must authenticate: set API_KEYS_FILE (name:sha256hex lines), ` +
        'AUTH_JWKS_URL with AUTH_JWT_ISSUER and AUTH_JWT_AUDIENCE, or AUTH=none to serve without authentication',
    );
  }
  return { ...(apiKeys && { apiKeys }), ...(jwt && { jwt }), none };
}

export function integer(env: Environment, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, not "${raw}"`);
  return n;
}
