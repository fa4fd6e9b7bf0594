import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.ts';
import { Problem } from './problems.ts';

/**
 * MAX_INFLIGHT_MB: the bytes of request bodies being read or worked on at once, across all requests. A request
 * reserves its Content-Length before a byte of its body is read and holds it until its answer is made; one that would
 * go over is answered 503 `overloaded` with Retry-After, its body unread. A body sent without Content-Length (chunked)
 * reserves as its buffer grows, up to MAX_BODY_MB; if the budget runs out midway it is answered 503 then, and what
 * it had read is dropped.
 */
export class InflightBudget {
  private used = 0;

  constructor(readonly limitBytes: number) {}

  /** Bytes reserved right now (the `http_inflight_body_bytes` gauge). */
  get bytes(): number {
    return this.used;
  }

  tryReserve(bytes: number): boolean {
    if (this.used + bytes > this.limitBytes) return false;
    this.used += bytes;
    return true;
  }

  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}

/** One request's share of the budget. */
export class BodyReservation {
  private reserved = 0;

  constructor(private readonly budget: InflightBudget) {}

  /** Makes the share at least `bytes`; false when the budget cannot give that much. */
  grow(bytes: number): boolean {
    const extra = bytes - this.reserved;
    if (extra <= 0) return true;
    if (!this.budget.tryReserve(extra)) return false;
    this.reserved = bytes;
    return true;
  }

  release(): void {
    this.budget.release(this.reserved);
    this.reserved = 0;
  }
}

export const RETRY_AFTER_SECONDS = 1;

export const overloaded = (detail: string) => new Problem('overloaded', detail, {}, { 'Retry-After': String(RETRY_AFTER_SECONDS) });

export const tooLarge = (maxBytes: number) =>
  new Problem('payload-too-large', `The request body is larger than ${Math.round(maxBytes / 1048576)} MB (MAX_BODY_MB).`);

/**
 * Admission of a document request: 413 when Content-Length is over MAX_BODY_MB, 503 when it does not fit in what is
 * left of MAX_INFLIGHT_MB; both before the body is read. The reservation is released when the answer is made.
 */
export function admitBody(budget: InflightBudget, maxBodyBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const declared = Number(c.req.header('content-length'));
    if (Number.isFinite(declared) && declared > maxBodyBytes) throw tooLarge(maxBodyBytes);
    const reservation = new BodyReservation(budget);
    if (Number.isInteger(declared) && declared > 0 && !reservation.grow(declared)) {
      throw overloaded(`The service is reading or working on as many documents as MAX_INFLIGHT_MB allows; retry in ${RETRY_AFTER_SECONDS} s.`);
    }
    c.set('bodyReservation', reservation);
    try {
      await next();
    } finally {
      reservation.release();
    }
  };
}
