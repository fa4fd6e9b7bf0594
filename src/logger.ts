import type { LogLevel, Logger } from './ports.ts';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A JSON-lines logger over any line sink (console on every runtime). */
export function jsonLogger(
  level: LogLevel,
  writeLine: (line: string) => void,
  now: () => Date = () => new Date(),
): Logger {
  return {
    log(at, message, fields) {
      if (ORDER[at] < ORDER[level]) return;
      writeLine(JSON.stringify({ time: now().toISOString(), level: at, msg: message, ...fields }));
    },
  };
}
