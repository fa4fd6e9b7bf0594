/**
 * What the gss-ntlmssp peers suites (gss-ntlm*.peers.test.ts) share: the check for their initiators, the users file,
 * and two echo servers (support/negotiate/negotiate-echo.ts) on the GSSAPI backend given that file, EncryptAndSign and
 * Sign, started before a suite's tests and stopped after them. support/negotiate/nns-client.py is the initiator.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { GssapiBackend } from '../../../tcp-bridge/src/negotiate/gssapi/index.ts';
import { LogonThrottle } from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import type { ProtectionLevel } from '../../../tcp-bridge/src/negotiate/security-context.ts';
import {
  ntlmClientAccount,
  runNnsClient,
  startNegotiateEcho,
  type ClientResult,
  type EchoServer,
} from '../../support/negotiate/negotiate-echo.ts';

export const USERS = 'TESTDOM:alice:Secret123!\nTESTDOM:bob:Hunter2!\n:carol:Carol789!\n';

/** Registers the users file and the servers 'EncryptAndSign' and 'Sign' on the calling describe block. */
export function useGssNtlmEcho() {
  const dir = mkdtempSync(join(tmpdir(), 'nns-gss-ntlm-'));
  const users = join(dir, 'users');
  const servers = new Map<ProtectionLevel, EchoServer>();
  const backends: GssapiBackend[] = [];
  const as = (line: string): Record<string, string> => ntlmClientAccount(dir, line);
  const alice = (): Record<string, string> => as('TESTDOM:alice:Secret123!');
  const server = (level: ProtectionLevel): EchoServer => servers.get(level)!;
  const last = (level: ProtectionLevel) => server(level).connections[server(level).connections.length - 1]!;
  const closed = async (level: ProtectionLevel): Promise<void> =>
    server(level).closedCount(server(level).connections.length);
  const client = (
    level: ProtectionLevel,
    mode: string,
    args: string[],
    env: Record<string, string> = alice(),
  ): Promise<ClientResult> => runNnsClient(server(level).port, mode, args, env);

  const backend = (options: Partial<ConstructorParameters<typeof GssapiBackend>[0]> = {}): GssapiBackend => {
    // Generous limits: these suites make many attempts from 127.0.0.1 on purpose; throttling has its own test.
    const made = new GssapiBackend({
      ntlmUsers: users,
      dnsIdentity: 'localhost',
      throttle: new LogonThrottle({ perUser: 100, perAddress: 100 }),
      ...options,
    });
    backends.push(made);
    return made;
  };

  /** After a refusal the same server must still serve the next client. */
  async function stillServes(level: ProtectionLevel): Promise<void> {
    const result = await client(level, 'echo', ['--message', '6f6b']);
    expect(result).toMatchObject({ result: 'ok', replies: ['6f6b'] });
    await closed(level);
    expect(last(level).peer?.name).toBe('TESTDOM\\alice');
    expect(last(level).failure).toBeUndefined();
  }

  beforeAll(async () => {
    writeFileSync(users, USERS);
    chmodSync(users, 0o600);
    for (const level of ['EncryptAndSign', 'Sign'] as const)
      servers.set(level, await startNegotiateEcho({ backends: [backend()], protectionLevel: level }));
  });

  afterAll(async () => {
    for (const s of servers.values()) await s.close();
    for (const b of backends) b.close();
    rmSync(dir, { recursive: true, force: true });
  });

  return { dir, users, as, alice, server, last, closed, client, backend, stillServes };
}
