/**
 * A TCP server for the NegotiateStream tests: each connection runs tcp-bridge/src/negotiate/stream.ts from its first
 * byte (no .NET Message Framing in front) and echoes every plaintext chunk it unwraps. What happened on each
 * connection is recorded for the tests to check; `nns-client.py` (real GSSAPI and impacket initiators) is the client.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  NegotiateStreamServer,
  type NegotiatedPeer,
  type NegotiateStreamOptions,
} from '../../../tcp-bridge/src/negotiate/stream.ts';
import { IntegrityError, NegotiateError } from '../../../tcp-bridge/src/negotiate/security-context.ts';
import { NnsError } from '../../../tcp-bridge/src/negotiate/nns.ts';
import { socketStream } from '../../../tcp-bridge/src/socket-stream.ts';
import { expect } from 'vitest';
import { LOGON_DENIED_PAYLOAD } from './negotiate.ts';

export interface EchoConnection {
  remoteAddress: string;
  peer?: NegotiatedPeer;
  received: Uint8Array[];
  /** The reason a failure gave (NegotiateError.reason, IntegrityError kind, NnsError code). */
  failure?: string;
  closed: boolean;
}

export interface EchoServer {
  port: number;
  connections: EchoConnection[];
  /** Resolves once `count` connections have closed. */
  closedCount(count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startNegotiateEcho(options: Omit<NegotiateStreamOptions, 'remoteAddress'>): Promise<EchoServer> {
  const connections: EchoConnection[] = [];
  const sockets = new Set<Socket>();
  let waiters: Array<() => void> = [];
  const notify = (): void => {
    const pending = waiters;
    waiters = [];
    for (const w of pending) w();
  };
  const server = createServer({ noDelay: true }, (socket) => {
    sockets.add(socket);
    const record: EchoConnection = { remoteAddress: socket.remoteAddress ?? '', received: [], closed: false };
    connections.push(record);
    let plaintext: { write(bytes: Uint8Array): void } | undefined;
    const nego = new NegotiateStreamServer(
      socketStream(socket),
      { ...options, remoteAddress: record.remoteAddress },
      {
        established: (peer, stream) => {
          record.peer = peer;
          plaintext = stream;
        },
        data: (plain) => {
          record.received.push(plain);
          plaintext!.write(plain);
        },
        failed: (error) => {
          record.failure =
            error instanceof NegotiateError
              ? error.reason
              : error instanceof IntegrityError
                ? error.kind
                : error instanceof NnsError
                  ? error.code
                  : String(error);
        },
      },
    );
    socket.on('data', (chunk: Buffer) =>
      nego.receive(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)),
    );
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      nego.transportClosed();
      record.closed = true;
      sockets.delete(socket);
      notify();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    closedCount: (count) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (connections.filter((c) => c.closed).length >= count) resolve();
          else waiters.push(check);
        };
        check();
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const CLIENT = join(dirname(fileURLToPath(import.meta.url)), 'nns-client.py');
const PYTHON = '/usr/bin/python3';

export interface ClientResult {
  result: 'ok' | 'refused' | 'closed' | 'incomplete' | 'reply' | 'error' | 'usage';
  status?: string;
  replies?: string[];
  error?: string;
  [key: string]: unknown;
}

/** A one-line NTLM_USER_FILE (mode 0600) in `dir` for the gssapi modes (gss-ntlmssp takes its first line): their env. */
export function ntlmClientAccount(dir: string, line: string): Record<string, string> {
  const path = join(dir, `client-${randomUUID()}`);
  writeFileSync(path, `${line}\n`, { mode: 0o600 });
  return { NTLM_USER_FILE: path };
}

/** Runs nns-client.py once; `env` adds to the environment (NTLM_USER_FILE for the gssapi modes). */
export async function runNnsClient(
  port: number,
  mode: string,
  args: string[],
  env: Record<string, string>,
): Promise<ClientResult> {
  const child = spawn(PYTHON, [CLIENT, String(port), mode, ...args], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      KRB5CCNAME: 'FILE:/nonexistent/krb5cc',
      KRB5_CONFIG: '/dev/null',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const line = out.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as ClientResult;
  } catch {
    throw new Error(`nns-client.py ${mode} exited ${code}: ${out}${err}`);
  }
}

/** A logon refused as both ends see it: the client was told logon denied, and the server's last connection closed
 * with `reason` and no peer. */
export async function expectLogonDenied(server: EchoServer, result: ClientResult, reason: string): Promise<void> {
  expect(result).toEqual({ result: 'refused', status: LOGON_DENIED_PAYLOAD });
  await server.closedCount(server.connections.length);
  const last = server.connections[server.connections.length - 1]!;
  expect(last.failure).toBe(reason);
  expect(last.peer).toBeUndefined();
}
