/**
 * The bridge with Windows security: NTLM sessions on a pooled socket over the embedded SQLite backend, and the
 * Active Directory settings (NTLM pass-through domain, LDAP).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { securityBackends, type RunningBridge } from '../../tcp-bridge/src/server.ts';
import { PooledNtlmSocket } from '../support/nettcp/ntlm-nettcp.ts';
import { bridge } from './server-harness.ts';

let folder: string;

describe('tcp-bridge server with Windows security (NTLM)', () => {
  let running: RunningBridge;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-ntlm-'));
    await writeFile(join(folder, 'users'), 'TESTDOM:alice:Secret123!\n', { mode: 0o600 });
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['TESTDOM\\alice'] }));
    running = (await bridge(folder, { BRIDGE_SECURITY: 'windows', BRIDGE_NTLM_USERS: join(folder, 'users') })).bridge;
  });

  afterAll(async () => {
    await running?.close();
    await rm(folder, { recursive: true, force: true });
  });

  // Found by the .NET WCF client (test/bridge/dotnet.peers.test.ts): its pool keeps the raw socket, so the session
  // after a channel's Close starts in plaintext with a new upgrade; the bridge read it as an NNS frame and dropped it.
  it('serves a new plaintext preamble, upgrade and logon on the socket after End inside the sealed stream', async () => {
    const socket = await PooledNtlmSocket.connect(running.port);
    try {
      for (let round = 0; round < 3; round++) {
        const session = await socket.session('net.tcp://localhost/IDBService', {
          domain: 'TESTDOM',
          user: 'alice',
          password: 'Secret123!',
        });
        expect(await session.call('Heartbeat')).toBe('true');
        await session.end();
      }
      expect(running.connections()).toBe(1);
    } finally {
      socket.close();
    }
  });
});

describe('tcp-bridge settings for Active Directory (BRIDGE_NTLM_DOMAIN, BRIDGE_LDAP_*)', () => {
  it('reads the NetBIOS domain of NTLM pass-through, upper-cased, and refuses what is no NetBIOS name or the gssapi backend', () => {
    expect(readBridgeConfig({ BRIDGE_NTLM_DOMAIN: 'corp' }).ntlmDomain).toBe('CORP');
    expect(readBridgeConfig({}).ntlmDomain).toBeUndefined();
    expect(() => readBridgeConfig({ BRIDGE_NTLM_DOMAIN: 'corp.example.com.very' })).toThrow(/NetBIOS name/);
    expect(() => readBridgeConfig({ BRIDGE_NTLM_DOMAIN: 'CORP\\x' })).toThrow(/NetBIOS name/);
    expect(() =>
      readBridgeConfig({ BRIDGE_NTLM_DOMAIN: 'CORP', BRIDGE_NTLM_BACKEND: 'gssapi', BRIDGE_NTLM_USERS: '/u' }),
    ).toThrow(/built-in NTLM acceptor/);
    // The member's names are read at start (openSecurityBackends); the synchronous builder does not guess them.
    expect(() => securityBackends(readBridgeConfig({ BRIDGE_NTLM_DOMAIN: 'CORP' }))).toThrow(/openSecurityBackends/);
  });

  it('reads the LDAP settings: ldaps://, or ldap:// with StartTLS; a bind account and its password file are required', () => {
    const env = { BRIDGE_LDAP_BIND_DN: 'svc@corp.example', BRIDGE_LDAP_PASSWORD_FILE: '/etc/idb-bridge/ldap-password' };
    expect(readBridgeConfig({}).ldap).toBeUndefined();
    expect(
      readBridgeConfig({
        ...env,
        BRIDGE_LDAP_URL: 'ldaps://dc1.corp.example',
        BRIDGE_LDAP_CA_FILE: '/etc/ssl/corp-ca.pem',
      }).ldap,
    ).toEqual({
      url: 'ldaps://dc1.corp.example',
      startTls: false,
      bindDn: 'svc@corp.example',
      passwordFile: '/etc/idb-bridge/ldap-password',
      caFile: '/etc/ssl/corp-ca.pem',
      refreshMs: 900_000,
    });
    expect(
      readBridgeConfig({ ...env, BRIDGE_LDAP_URL: 'LDAP://dc1.corp.example:389', BRIDGE_LDAP_REFRESH_MS: '0' }).ldap,
    ).toMatchObject({ startTls: true, caFile: undefined, refreshMs: 0 });
    expect(() => readBridgeConfig({ ...env, BRIDGE_LDAP_URL: 'https://dc1.corp.example' })).toThrow(/ldaps:\/\/host/);
    expect(() => readBridgeConfig({ BRIDGE_LDAP_URL: 'ldaps://dc1.corp.example' })).toThrow(
      /BRIDGE_LDAP_BIND_DN and BRIDGE_LDAP_PASSWORD_FILE/,
    );
    expect(() => readBridgeConfig(env)).toThrow(
      /BRIDGE_LDAP_BIND_DN, BRIDGE_LDAP_PASSWORD_FILE without BRIDGE_LDAP_URL/,
    );
  });
});
