/**
 * The NTLM relay defence (BRIDGE_KERBEROS_ONLY, BRIDGE_NTLM_ACCOUNTS): a bridge on SQLite with Windows security and
 * local NTLM accounts, logged on to by the TypeScript NTLM client over real TCP (support/nettcp/ntlm-nettcp.ts).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { ntlmAllowed, readNtlmPolicy } from '../../tcp-bridge/src/negotiate/ntlm-policy.ts';
import { securityBackends, startBridge } from '../../tcp-bridge/src/server.ts';
import type { SecurityBackend } from '../../tcp-bridge/src/negotiate/index.ts';
import { openNodeIdbService } from '../../src/runtime/node/idb/idb-service.ts';
import { type NtlmAccount, PooledNtlmSocket } from '../support/nettcp/ntlm-nettcp.ts';

const silent = { log: () => {} };
const ALICE: NtlmAccount = { domain: 'TESTDOM', user: 'alice', password: 'Secret123!' };
const BOB: NtlmAccount = { domain: 'TESTDOM', user: 'bob', password: 'Secret456!' };
let folder: string;

function config(env: Record<string, string>) {
  return readBridgeConfig({
    BRIDGE_SECURITY: 'windows',
    BRIDGE_PORT: '0',
    BRIDGE_NTLM_USERS: join(folder, 'users'),
    DATABASE_URL: `file:${join(folder, 'idb.sqlite')}`,
    FILES_URL: `file:${join(folder, 'files')}`,
    BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
    ...env,
  });
}

/** Who of `accounts` gets a Heartbeat answered on a bridge with `env` (and `backends`, else the configured ones). */
async function admitted(env: Record<string, string>, accounts: NtlmAccount[], backends?: SecurityBackend[]) {
  const settings = config(env);
  const service = await openNodeIdbService(settings, silent);
  const running = await startBridge(settings, service, silent, backends ?? securityBackends(settings));
  try {
    const outcomes: string[] = [];
    for (const account of accounts) {
      const socket = await PooledNtlmSocket.connect(running.port);
      try {
        const session = await socket.session('net.tcp://localhost/IDBService', account);
        outcomes.push(`${account.user}: ${await session.call('Heartbeat')}`);
      } catch (error) {
        outcomes.push(
          `${account.user}: ${/logon denied/.test((error as Error).message) ? 'denied' : (error as Error).message}`,
        );
      } finally {
        socket.close();
      }
    }
    return outcomes;
  } finally {
    await running.close();
  }
}

describe('NTLM relay defence (BRIDGE_KERBEROS_ONLY, BRIDGE_NTLM_ACCOUNTS)', () => {
  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-ntlm-policy-'));
    await writeFile(join(folder, 'users'), 'TESTDOM:alice:Secret123!\nTESTDOM:bob:Secret456!\n', { mode: 0o600 });
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ reader: ['TESTDOM\\alice', 'TESTDOM\\bob'] }));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('reads the policy: accounts and domains, case-insensitive; refuses what is no account or domain, and both settings at once', () => {
    const policy = readNtlmPolicy(undefined, 'testdom\\Alice, LEGACY');
    expect(ntlmAllowed(policy, 'TESTDOM\\alice')).toBe(true);
    expect(ntlmAllowed(policy, 'TESTDOM\\bob')).toBe(false);
    expect(ntlmAllowed(policy, 'legacy\\anyone')).toBe(true);
    expect(ntlmAllowed(readNtlmPolicy('true', undefined), 'TESTDOM\\alice')).toBe(false);
    expect(ntlmAllowed(readNtlmPolicy(undefined, ''), 'TESTDOM\\alice')).toBe(true);
    expect(() => readNtlmPolicy(undefined, 'a b\\c')).toThrow(/BRIDGE_NTLM_ACCOUNTS/);
    expect(() => readNtlmPolicy('yes', undefined)).toThrow(/BRIDGE_KERBEROS_ONLY/);
    expect(() => readNtlmPolicy('true', 'TESTDOM')).toThrow(/BRIDGE_NTLM_ACCOUNTS/);
  });

  it('allows NTLM only for the listed accounts or domains', async () => {
    expect(await admitted({}, [ALICE, BOB])).toEqual(['alice: true', 'bob: true']);
    expect(await admitted({ BRIDGE_NTLM_ACCOUNTS: 'TESTDOM\\alice' }, [ALICE, BOB])).toEqual([
      'alice: true',
      'bob: denied',
    ]);
    expect(await admitted({ BRIDGE_NTLM_ACCOUNTS: 'TESTDOM' }, [ALICE, BOB])).toEqual(['alice: true', 'bob: true']);
    expect(await admitted({ BRIDGE_NTLM_ACCOUNTS: 'OTHERDOM' }, [ALICE])).toEqual(['alice: denied']);
  }, 60_000);

  it('with BRIDGE_KERBEROS_ONLY refuses to start with NTLM accounts or without a keytab, and refuses an NTLM logon whatever backend offers it', async () => {
    expect(() => securityBackends(config({ BRIDGE_KERBEROS_ONLY: 'true' }))).toThrow(/KRB5_KTNAME/);
    // A GSSAPI acceptor offers NTLM too where gss-ntlmssp is installed: the policy holds at the stream.
    const ntlmBackends = securityBackends(config({}));
    expect(await admitted({ BRIDGE_KERBEROS_ONLY: 'true' }, [ALICE], ntlmBackends)).toEqual(['alice: denied']);
  }, 60_000);
});
