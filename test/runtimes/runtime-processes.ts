/**
 * The runtimes of runtimes.test.ts as child processes, started exactly as their npm scripts start them (from
 * node_modules/.bin, without npm) with the authentication every one of them serves (an API key file and a JWKS served
 * here), and `ask`, which sends a parity case and returns the answer with its `traceId` set apart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  serveJwks,
  sha256Hex,
  signingKey,
  signJwt,
  unsignedJwt,
  type JwksServer,
  type SigningKey,
} from '../support/http/jwt.ts';
import { freePort } from '../support/net.ts';
import { API_KEY, AUDIENCE, ISSUER, type Case } from './parity-cases.ts';

export const ROOT = join(import.meta.dirname, '..', '..');
export const START_TIMEOUT_MS = 20_000;
export const RUNTIMES = { node: 'start', bun: 'start:bun', deno: 'start:deno' } as const;
export type Runtime = keyof typeof RUNTIMES;

export interface Answer {
  status: number;
  contentType: string | null;
  body: unknown;
  traceId: unknown;
}

const tokens = new Map<string, string>();

export async function ask(baseUrl: string, c: Case): Promise<Answer> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(c.headers ?? { authorization: `Bearer ${API_KEY}` }))
    headers[name] = value.replace(/jwt:([a-z-]+)/, (_, t: string) => tokens.get(t)!);
  const res = await fetch(baseUrl + c.path, {
    method: c.method,
    headers: { ...headers, ...(c.contentType ? { 'Content-Type': c.contentType } : {}) },
    body: c.body as BodyInit | undefined,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let body: unknown = text;
  let traceId: unknown;
  try {
    if (!c.raw) body = JSON.parse(text);
  } catch {
    // compared as text
  }
  if (body && typeof body === 'object' && 'traceId' in body) {
    ({ traceId, ...body } = body as Record<string, unknown>);
  }
  return { status: res.status, contentType: res.headers.get('content-type'), body, traceId };
}

// ---- child processes -------------------------------------------------------------------------------------------

interface Server {
  runtime: Runtime;
  child: ChildProcess;
  baseUrl: string;
  exited: Promise<void>;
}

export const servers = new Map<Runtime, Server>();
const keysDir = mkdtempSync(join(tmpdir(), 'runtimes-keys-'));
let jwks: JwksServer | undefined;
let productionEnv: Record<string, string> = {};

/** The JWKS server, the key file and the tokens the cases use; the env every runtime is started with. */
export async function setUpAuthentication(): Promise<void> {
  const key: SigningKey = await signingKey('parity-1');
  jwks = await serveJwks([key]);
  writeFileSync(join(keysDir, 'keys'), `# parity\nparity:${await sha256Hex(API_KEY)}\n`);
  const now = Math.floor(Date.now() / 1000);
  const claims = { iss: ISSUER, aud: AUDIENCE, sub: 'parity-robot', exp: now + 3600 };
  tokens.set('valid', await signJwt(key, claims));
  tokens.set('expired', await signJwt(key, { ...claims, exp: now - 60 }));
  tokens.set('wrong-audience', await signJwt(key, { ...claims, aud: 'another-app' }));
  tokens.set('none', unsignedJwt(key.kid, claims));
  productionEnv = {
    API_KEYS_FILE: join(keysDir, 'keys'),
    AUTH_JWKS_URL: jwks.url,
    AUTH_JWT_ISSUER: ISSUER,
    AUTH_JWT_AUDIENCE: AUDIENCE,
  };
}

/** The npm script's command line, run from node_modules/.bin without npm (so signals reach the server itself). */
export function scriptCommand(script: string): [string, string[]] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const line = pkg.scripts[script];
  if (!line) throw new Error(`package.json has no "${script}" script`);
  if (/[$|&;<>'"`\\]/.test(line))
    throw new Error(`package.json script "${script}" uses shell syntax this test cannot run: ${line}`);
  const [bin, ...args] = line.trim().split(/\s+/);
  if (bin === 'node') return [process.execPath, args];
  const path = join(ROOT, 'node_modules', '.bin', bin!);
  if (!existsSync(path))
    throw new Error(
      `${bin} is missing at ${path}: it is a devDependency, run npm install (needed by npm run ${script})`,
    );
  return [path, args];
}

export async function start(runtime: Runtime): Promise<Server> {
  const [bin, args] = scriptCommand(RUNTIMES[runtime]);
  const port = await freePort();
  // Own process group, so tsx's child node process goes down with it.
  const child = spawn(bin, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      MAX_BODY_MB: '1',
      PDF_WORKERS: '2',
      NO_COLOR: '1',
      ...productionEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stdout = '';
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (stderr += s));

  const baseUrl = await new Promise<string>((resolve, reject) => {
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(
        new Error(
          `${runtime} (${bin} ${args.join(' ')}) ${why}\n--- stderr ---\n${stderr.trim() || '(empty)'}\n--- stdout ---\n${stdout.trim() || '(empty)'}`,
        ),
      );
    };
    const timer = setTimeout(
      () => fail(`logged no {"msg":"listening"} line within ${START_TIMEOUT_MS / 1000} s`),
      START_TIMEOUT_MS,
    );
    child.once('error', (e) => fail(`could not start: ${e.message}`));
    child.once('exit', (code, signal) => fail(`exited before listening (code ${code}, signal ${signal})`));
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      stdout += s;
      const listening = stdout.split('\n').some((line) => {
        try {
          return (JSON.parse(line) as { msg?: string }).msg === 'listening';
        } catch {
          return false; // not a (complete) JSON line yet
        }
      });
      if (listening) {
        clearTimeout(timer);
        child.stdout!.removeAllListeners('data').resume();
        resolve(`http://127.0.0.1:${port}`);
      }
    });
  });
  const server = { runtime, child, baseUrl, exited };
  servers.set(runtime, server);
  return server;
}

export async function stop({ child, exited }: Server): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const group = (signal: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // already gone
    }
  };
  group('SIGTERM');
  const timedOut = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((r) => setTimeout(() => r(true), 3000)),
  ]);
  if (timedOut) group('SIGKILL');
}

/** Stops the JWKS server and removes the key file. */
export async function tearDownAuthentication(): Promise<void> {
  await jwks?.close();
  rmSync(keysDir, { recursive: true, force: true });
}
