/** Hono context variables set by the app's middleware. */
export type AppEnv = { Variables: { traceId: string } };
