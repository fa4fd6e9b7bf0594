/** Ports the platform-free core needs from its runtime; each runtime's entry file supplies them. */

export interface Clock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Structured log sink: one JSON object per line. Callers never pass document contents or secrets. */
export interface Logger {
  log(level: LogLevel, message: string, fields?: Record<string, unknown>): void;
}
