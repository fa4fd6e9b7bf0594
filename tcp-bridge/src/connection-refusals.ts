/**
 * Why a BridgeConnection ends a connection it does not like, and how: what it logs, what the refusals metric counts,
 * and whether a framing fault record goes out before the end (else the stream is aborted, as WCF aborts).
 */
import type { EnvelopeTimeout } from './envelope-budget.ts';
import { FramingFault } from './framing/index.ts';

/** The connection's own time-outs: at most one runs at a time (the message time-out is the envelope budget's). */
export type Deadline = 'init' | 'idle' | 'send';

export interface Refusal {
  reason: string;
  message: string;
  fields?: Record<string, unknown>;
  /** Written as a Fault record before the stream ends; without it the stream is aborted. */
  fault?: string;
  level?: 'info' | 'warn' | 'error';
  /** Counted in the refusals metric (time-outs of idle or silent connections are ordinary ends: not counted). */
  counted?: boolean;
}

/** How long each of them runs (ConnectionOptions' time-outs). */
export function deadlineMs(
  deadline: Deadline,
  options: { initTimeoutMs: number; idleTimeoutMs: number; sendTimeoutMs: number },
): number {
  return deadline === 'init'
    ? options.initTimeoutMs
    : deadline === 'idle'
      ? options.idleTimeoutMs
      : options.sendTimeoutMs;
}

export function deadlineRefusal(deadline: Deadline, unsent: number): Refusal {
  if (deadline === 'send')
    return {
      reason: 'SendTimeout',
      message: 'the client took no reply bytes within the send time-out, connection aborted',
      fields: { unsent },
    };
  return {
    reason: deadline === 'init' ? 'InitTimeout' : 'IdleTimeout',
    message: 'connection timed out',
    level: 'info',
    counted: false,
  };
}

export function envelopeRefusal({ reason, size }: EnvelopeTimeout, received: number | undefined): Refusal {
  if (reason === 'ServerTooBusy')
    return { reason, message: 'connection refused', fields: { waitedForBytes: size }, fault: reason };
  return { reason, message: 'message timed out, connection aborted', fields: { size, received } };
}

export function framingRefusal(error: unknown): Refusal {
  if (error instanceof FramingFault)
    return {
      reason: error.code,
      message: 'framing refused',
      fields: { position: error.position },
      ...(error.faultString === undefined ? {} : { fault: error.faultString }),
    };
  return { reason: 'FramingFailed', message: 'framing failed', fields: { error: String(error) }, level: 'error' };
}
