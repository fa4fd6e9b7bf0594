import type { BodyReservation } from './body-budget.ts';

/** Hono context variables set by the app's middleware. */
export type AppEnv = {
  Variables: {
    traceId: string;
    /** Who is calling (an API key's name or a JWT's `sub`), for the request log; unset without authentication. */
    caller?: string;
    /** The request body's share of MAX_INFLIGHT_MB, on the document routes. */
    bodyReservation?: BodyReservation;
  };
};
