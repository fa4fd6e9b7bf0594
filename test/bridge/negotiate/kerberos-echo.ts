/**
 * What the Kerberos peers suites (kerberos*.peers.test.ts) share: the check for their peers, and a real MIT KDC of
 * realm TEST.LOCAL (support/negotiate/krb5-realm.ts) with two echo servers (support/negotiate/negotiate-echo.ts) on the
 * GSSAPI backend, EncryptAndSign and Sign, started before a suite's tests and stopped after them.
 * support/negotiate/nns-client.py is the initiator, with alice's ticket.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { GssapiBackend } from '../../../tcp-bridge/src/negotiate/gssapi/index.ts';
import type { ProtectionLevel } from '../../../tcp-bridge/src/negotiate/security-context.ts';
import { startTestRealm, type TestRealm } from '../../support/negotiate/krb5-realm.ts';
import {
  runNnsClient,
  startNegotiateEcho,
  type ClientResult,
  type EchoServer,
} from '../../support/negotiate/negotiate-echo.ts';

export const ALICE = 'alice@TEST.LOCAL';

export interface KerberosEcho {
  /** The running realm (set once the suite's beforeAll ran). */
  readonly realm: TestRealm;
  /** A temp folder of the suite's own, removed after it. */
  readonly scratch: string;
  readonly backends: GssapiBackend[];
  readonly servers: Map<string, EchoServer>;
  server(key: string): EchoServer;
  last(key: string): EchoServer['connections'][number];
  closed(key: string): Promise<void>;
  client(key: string, mode: string, args: string[]): Promise<ClientResult>;
  startServer(key: string, level: ProtectionLevel, keytab: string): Promise<void>;
  /** After a refusal the same server must still serve the next client. */
  stillServes(key: string, args?: string[]): Promise<void>;
}

/** Registers the realm and the servers 'EncryptAndSign' and 'Sign' on the calling describe block. */
export function useKerberosEcho(): KerberosEcho {
  let realm: TestRealm | undefined;
  let scratch: string | undefined;
  const backends: GssapiBackend[] = [];
  const servers = new Map<string, EchoServer>();
  const server = (key: string): EchoServer => servers.get(key)!;
  const last = (key: string) => server(key).connections[server(key).connections.length - 1]!;
  const closed = async (key: string): Promise<void> => server(key).closedCount(server(key).connections.length);
  const client = (key: string, mode: string, args: string[]): Promise<ClientResult> =>
    runNnsClient(server(key).port, mode, ['--krb5', ...args], realm!.clientEnv);

  async function startServer(key: string, level: ProtectionLevel, keytab: string): Promise<void> {
    const backend = new GssapiBackend({
      keytab,
      dnsIdentity: 'localhost',
      replayCache: `file2:${join(realm!.dir, `rcache-${key}`)}`,
    });
    backends.push(backend);
    servers.set(key, await startNegotiateEcho({ backends: [backend], protectionLevel: level }));
  }

  async function stillServes(key: string, args: string[] = []): Promise<void> {
    const result = await client(key, 'echo', ['--message', '6f6b', ...args]);
    expect(result).toMatchObject({ result: 'ok', replies: ['6f6b'] });
    await closed(key);
    expect(last(key).peer?.name).toBe(ALICE);
    expect(last(key).failure).toBeUndefined();
  }

  beforeAll(async () => {
    realm = await startTestRealm();
    scratch = mkdtempSync(join(tmpdir(), 'nns-krb5-'));
    await startServer('EncryptAndSign', 'EncryptAndSign', realm.keytab);
    await startServer('Sign', 'Sign', realm.keytab);
  }, 90_000);

  afterAll(async () => {
    for (const s of servers.values()) await s.close();
    for (const backend of backends) backend.close();
    await realm?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  return {
    get realm() {
      return realm!;
    },
    get scratch() {
      return scratch!;
    },
    backends,
    servers,
    server,
    last,
    closed,
    client,
    startServer,
    stillServes,
  };
}
