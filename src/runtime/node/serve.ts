/**
 * The HTTP listener of `npm start`: @hono/node-server, plus `Expect: 100-continue` answered from MAX_INFLIGHT_MB.
 *
 * Node answers 100 Continue by itself unless the server handles `checkContinue`, so a client would upload a body
 * the app is about to refuse (503 overloaded) and, past the few hundred milliseconds @hono/node-server spends
 * draining it, meet a closed socket instead of the answer. Handled here: 100 Continue only when the declared body
 * fits what is left of the budget; otherwise the app answers at once (503, or 413 past MAX_BODY_MB) and a client
 * that waits for 100 Continue, as curl does for large bodies, never sends the body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serve, type ServerType } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { ByteBudget } from '../../byte-budget.ts';

export interface NodeServeOptions {
  fetch: (request: Request) => Response | Promise<Response>;
  port: number;
  hostname: string;
  budget: ByteBudget;
  maxBodyBytes: number;
}

export function serveNode(options: NodeServeOptions, listening: (info: AddressInfo) => void): ServerType {
  const server = serve({ fetch: options.fetch, port: options.port, hostname: options.hostname }, listening);
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    const declared = Number(request.headers['content-length']);
    const refused = Number.isFinite(declared) && (declared > options.maxBodyBytes || !options.budget.fits(declared));
    if (!refused) response.writeContinue();
    server.emit('request', request, response);
  });
  return server;
}
