import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env.ts';
import type { ByteBudget } from '../byte-budget.ts';
import { BodyReservation } from './body-budget.ts';
import { Problem } from './problems.ts';

export const RETRY_AFTER_SECONDS = 1;

export const overloaded = (detail: string) =>
  new Problem('overloaded', detail, {}, { 'Retry-After': String(RETRY_AFTER_SECONDS) });

export const tooLarge = (maxBytes: number) =>
  new Problem(
    'payload-too-large',
    `The request body is larger than ${Math.round(maxBytes / 1048576)} MB (MAX_BODY_MB).`,
  );

/**
 * Admission of a document request: 413 when Content-Length is over MAX_BODY_MB, 503 when it does not fit in what is
 * left of MAX_INFLIGHT_MB; both before the body is read. The reservation is released when the answer is made.
 */
export function admitBody(budget: ByteBudget, maxBodyBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const declared = Number(c.req.header('content-length'));
    if (Number.isFinite(declared) && declared > maxBodyBytes) throw tooLarge(maxBodyBytes);
    const reservation = new BodyReservation(budget);
    if (Number.isInteger(declared) && declared > 0 && !reservation.grow(declared)) {
      throw overloaded(
        `The service is reading or working on as many documents as MAX_INFLIGHT_MB allows; retry in ${RETRY_AFTER_SECONDS} s.`,
      );
    }
    c.set('bodyReservation', reservation);
    try {
      await next();
    } finally {
      reservation.release();
    }
  };
}
