import { OpenAPIHono } from '@hono/zod-openapi';
import { Scalar } from '@scalar/hono-api-reference';
import type { HttpConfig } from './config.ts';
import type { ApiKey } from './http/api-keys.ts';
import { authMiddleware } from './http/auth.ts';
import type { AppEnv } from './http/env.ts';
import { ByteBudget } from './byte-budget.ts';
import { admitBody, overloaded } from './http/inflight.ts';
import { JwksCache } from './http/jwks.ts';
import { AppMetrics } from './http/metrics.ts';
import { Problem, problemResponse } from './http/problems.ts';
import { extractRoute, registerExtractRoute } from './http/extract-route.ts';
import { documentPaths } from './http/form-routes.ts';
import { registerValidateRoute, validateRoute } from './http/validate-route.ts';
import type { EndpointConfig } from './idb/config.ts';
import { writeWsdl, type WsdlOptions } from './idb/wsdl.ts';
import type { MetricsRegistry } from './metrics.ts';
import type { PdfEngine } from './pdf/engine/port.ts';
import { EngineBusyError, type EngineStats } from './pdf/engine/queue.ts';
import { MAX_STRUCTURE_STREAM_BYTES } from './pdf/validate.ts';
import type { Clock, Logger } from './ports.ts';
import type { QrExtractor } from './qr/extractor.ts';

/** Everything the app needs from its runtime; each runtime's entry file builds this. */
export interface AppDeps {
  config: HttpConfig;
  /** The IIDBService net.tcp endpoint (the bridge's settings) that GET /IDBService?wsdl describes. */
  endpoint: EndpointConfig;
  engine: PdfEngine;
  qr: QrExtractor;
  clock: Clock;
  logger: Logger;
  /** The API reference's browser bundle, served by the service itself so /docs works offline. */
  docsScript: () => Promise<string>;
  /** The keys of API_KEYS_FILE (or API_KEYS), read and parsed by the runtime's entry (parseApiKeys). */
  apiKeys?: readonly ApiKey[];
  /** Where GET /metrics comes from; without it there is no /metrics (the CLI). */
  metrics?: MetricsRegistry;
  /** Documents waiting for an engine, engines restarted. */
  engineStats?: EngineStats;
  /** MAX_INFLIGHT_MB's budget, when the entry shares it with its server (Node answers 100-continue from it). */
  budget?: ByteBudget;
}

export const SERVICE_TITLE = 'Swiss document service';
export const SERVICE_VERSION = '0.1.0';

export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const { config, clock, logger } = deps;
  const app = new OpenAPIHono<AppEnv>();
  const budget = deps.budget ?? new ByteBudget(config.maxInflightBytes);
  // Each operation's path, and its /file and /form paths (form-routes.ts).
  const documentRoutes = [validateRoute.path, extractRoute.path].flatMap((path) =>
    documentPaths(path).map((p) => p.path),
  );
  const routes = new Set([
    ...documentRoutes,
    '/health',
    '/openapi.json',
    '/docs',
    '/docs/scalar.js',
    '/metrics',
    '/IDBService',
  ]);
  const metrics = deps.metrics && new AppMetrics(deps.metrics, routes, { budget, engines: deps.engineStats });

  app.use(async (c, next) => {
    const started = clock.now();
    c.set('traceId', traceIdFor(c.req.header('traceparent')));
    await next();
    const durationMs = clock.now() - started;
    metrics?.requestAnswered(c.req.path, c.req.method, c.res.status, durationMs / 1000);
    // Never log bodies (customers' documents), keys or tokens: the caller is the key's name or the token's subject.
    logger.log(c.res.status >= 500 ? 'error' : 'info', 'request', {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round(durationMs * 10) / 10,
      requestBytes: Number(c.req.header('content-length')) || undefined,
      caller: c.get('caller'),
      traceId: c.get('traceId'),
    });
  });

  // Authentication on the document routes and /metrics; /health, /openapi.json and /docs stay open.
  const auth = authenticationOf(deps);
  if (auth) {
    app.use('/api/*', auth);
    app.use('/metrics', auth);
  }
  // MAX_INFLIGHT_MB: admitted (or 503) before the body is read, released when the answer is made.
  app.on('POST', documentRoutes, admitBody(budget, config.maxBodyBytes));

  const qr: QrExtractor = metrics
    ? {
        scan: async (pdf) => {
          const outcome = await deps.qr.scan(pdf);
          if (outcome.status === 'found') metrics.billFound(outcome.pass);
          return outcome;
        },
      }
    : deps.qr;
  registerValidateRoute(app, {
    engine: deps.engine,
    clock,
    timeoutMs: config.pdfTimeoutMs,
    maxStreamBytes: MAX_STRUCTURE_STREAM_BYTES,
    maxBodyBytes: config.maxBodyBytes,
  });
  registerExtractRoute(app, { qr, maxBodyBytes: config.maxBodyBytes });

  if (metrics) {
    app.get('/metrics', async (c) => {
      const { contentType, text } = await metrics.registry.render();
      return c.body(text, 200, { 'Content-Type': contentType, 'Cache-Control': 'no-store' });
    });
  }
  app.get('/health', (c) => c.json({ status: 'ok' }));
  registerWsdlRoute(app, deps.endpoint);
  // The schemes are declared whatever this instance is configured with: a deployment that requires them says so.
  app.openAPIRegistry.registerComponent('securitySchemes', 'ApiKey', {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'An API key (API_KEYS_FILE); it may also be sent as `Authorization: Bearer <key>`.',
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'Bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key, or a JWT of the OpenID Connect provider the service is configured with (AUTH_JWKS_URL).',
  });
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: SERVICE_TITLE,
      version: SERVICE_VERSION,
      description:
        'PDF validation and Swiss QR-bill extraction. Unless the service runs on loopback or with AUTH=none, the document endpoints need an API key or a bearer token.',
    },
    security: [{ ApiKey: [] }, { Bearer: [] }],
  });
  app.get('/docs/scalar.js', async (c) =>
    c.body(await deps.docsScript(), 200, {
      'Content-Type': 'text/javascript; charset=utf-8',
      'Cache-Control': 'public, max-age=86400',
    }),
  );
  // Offline and private: no CDN, no web fonts, no telemetry, no "Ask AI" agent (it would send the API to a third party).
  app.get(
    '/docs',
    Scalar({
      url: '/openapi.json',
      cdn: '/docs/scalar.js',
      pageTitle: `${SERVICE_TITLE} API`,
      withDefaultFonts: false,
      telemetry: false,
      showDeveloperTools: 'never',
      agent: { disabled: true },
    } as Parameters<typeof Scalar>[0]),
  );

  // A known path with another method is 405 with Allow, as ASP.NET answers, not 404.
  for (const path of documentRoutes) {
    app.on(['GET', 'PUT', 'PATCH', 'DELETE'], path, (c) => {
      c.header('Allow', 'POST');
      return problemResponse(
        c,
        config.problemTypeBase,
        new Problem('method-not-allowed', `${c.req.path} accepts POST only.`),
      );
    });
  }

  app.notFound((c) =>
    problemResponse(
      c,
      config.problemTypeBase,
      new Problem('not-found', `No resource at ${c.req.method} ${c.req.path}.`),
    ),
  );
  app.onError((err, c) => {
    if (err instanceof Problem) return problemResponse(c, config.problemTypeBase, err);
    if (err instanceof EngineBusyError)
      return problemResponse(
        c,
        config.problemTypeBase,
        overloaded(`The document waited ${err.waitedMs} ms for a PDF engine (QUEUE_TIMEOUT_MS); retry later.`),
      );
    logger.log('error', 'unhandled error', { traceId: c.get('traceId'), error: err.name, message: err.message });
    return problemResponse(
      c,
      config.problemTypeBase,
      new Problem('internal', 'The request could not be processed. Quote the traceId when reporting it.'),
    );
  });
  return app;
}

/** The authentication middleware this configuration asks for, or undefined (AUTH=none, or loopback with nothing set). */
function authenticationOf(deps: AppDeps) {
  const { auth } = deps.config;
  if (auth.none || (!auth.apiKeys && !auth.jwt)) return undefined;
  // Fail closed: keys were configured, so the entry must have read them.
  if (auth.apiKeys && !deps.apiKeys)
    throw new Error('API keys are configured but were not loaded by the runtime entry');
  const jwt = auth.jwt && {
    jwks: new JwksCache({ url: auth.jwt.jwksUrl, clock: deps.clock, logger: deps.logger }),
    issuer: auth.jwt.issuer,
    audience: auth.jwt.audience,
  };
  return authMiddleware({ ...(deps.apiKeys && { apiKeys: deps.apiKeys }), ...(jwt && { jwt }) });
}

/**
 * The IIDBService description where WCF publishes it: the service's path with `?wsdl`, or `?singleWsdl` (.NET 4.5),
 * both the one document with inline XSD here; query names are matched case-insensitively as WCF does (`?WSDL`).
 * `datatable=anytype` selects the form Mono's svcutil imports. Kept out of the OpenAPI document: it describes the
 * net.tcp bridge for WCF tooling, not an operation of this HTTP API.
 */
function registerWsdlRoute(app: OpenAPIHono<AppEnv>, endpoint: EndpointConfig): void {
  const documents = new Map<WsdlOptions['dataTable'], string>();
  app.get('/IDBService', (c) => {
    const query = new Map(Array.from(new URL(c.req.url).searchParams, ([name, value]) => [name.toLowerCase(), value]));
    if (!query.has('wsdl') && !query.has('singlewsdl')) {
      throw new Problem(
        'not-found',
        `No resource at ${c.req.method} ${c.req.path}. The service description is at ${c.req.path}?wsdl.`,
      );
    }
    const requested = query.get('datatable');
    if (requested !== undefined && requested.toLowerCase() !== 'anytype') {
      const message = 'datatable must be anytype, or left out for the DataTable form.';
      throw new Problem('validation', message, { errors: { datatable: [message] } });
    }
    const dataTable = requested === undefined ? 'dataset' : 'anytype';
    const wsdl = documents.get(dataTable) ?? writeWsdl(endpoint, { dataTable });
    documents.set(dataTable, wsdl);
    return c.body(wsdl, 200, { 'Content-Type': 'text/xml; charset=utf-8' });
  });
}

/** W3C trace context: continue the caller's trace when it sends one, else start a new one. Format as ASP.NET's traceId. */
function traceIdFor(traceparent: string | undefined): string {
  const randomBytes = (n: number) => crypto.getRandomValues(new Uint8Array(n));
  const incoming = /^00-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent ?? '')?.[1];
  const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `00-${incoming ?? hex(randomBytes(16))}-${hex(randomBytes(8))}-00`;
}
