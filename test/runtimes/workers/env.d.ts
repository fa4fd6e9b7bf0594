/**
 * The part of `cloudflare:test` (@cloudflare/vitest-pool-workers) these tests use. The package's own declarations
 * need @cloudflare/workers-types, which would replace the DOM and Node globals the root typecheck relies on.
 */
declare module 'cloudflare:test' {
  /** The `main` worker of wrangler.toml, running in the same isolate as the tests. */
  export const SELF: { fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> };
}
