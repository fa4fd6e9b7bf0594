/**
 * NegotiateStream end to end against real initiators: MIT GSSAPI's SPNEGO with gss-ntlmssp (python3-gssapi, the same
 * stack as the acceptor of the captured session) and impacket's NTLM client, both through
 * support/negotiate/nns-client.py over TCP, against stream.ts + the NTLM backend in
 * support/negotiate/negotiate-echo.ts, which echoes what it unwraps.
 *
 * Needs /usr/bin/python3 with gssapi and gss-ntlmssp (and impacket for the no-MIC refusal): Debian packages
 * python3-gssapi gss-ntlmssp python3-impacket. Without them the suites are skipped, and say so.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogonThrottle, NtlmAccounts, NtlmBackend, ntHash } from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import type { ProtectionLevel } from '../../../tcp-bridge/src/negotiate/security-context.ts';
import {
  expectLogonDenied,
  ntlmClientAccount,
  runNnsClient,
  startNegotiateEcho,
  type EchoServer,
} from '../../support/negotiate/negotiate-echo.ts';
import { LOGON_DENIED_PAYLOAD, pattern, toHex } from '../../support/negotiate/negotiate.ts';
import { needPeers, PEERS } from '../../support/peers.ts';

const noInitiators = needPeers('negotiate e2e', PEERS.gssInitiators);
const noImpacket = needPeers('negotiate e2e impacket', PEERS.impacket);

describe.skipIf(noInitiators)('NegotiateStream with real GSSAPI/NTLM initiators (gss-ntlmssp, impacket)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nns-e2e-'));
  const servers = new Map<ProtectionLevel, EchoServer>();
  const as = (line: string): Record<string, string> => ntlmClientAccount(dir, line);
  const alice = (): Record<string, string> => as('TESTDOM:alice:Secret123!');
  const last = (level: ProtectionLevel) => servers.get(level)!.connections[servers.get(level)!.connections.length - 1]!;
  const closed = async (level: ProtectionLevel): Promise<void> =>
    servers.get(level)!.closedCount(servers.get(level)!.connections.length);

  /** After a refusal the same server must still serve the next client. */
  async function stillServes(level: ProtectionLevel): Promise<void> {
    const result = await runNnsClient(servers.get(level)!.port, 'echo', ['--message', '6f6b'], alice());
    expect(result).toMatchObject({ result: 'ok', replies: ['6f6b'] });
    await closed(level);
    expect(last(level).peer?.name).toBe('TESTDOM\\alice');
  }

  beforeAll(async () => {
    const users = join(dir, 'users');
    writeFileSync(users, `TESTDOM:alice:Secret123!\nTESTDOM:bob:{NT}${toHex(ntHash('Hunter2!'))}\n`);
    chmodSync(users, 0o600);
    for (const level of ['EncryptAndSign', 'Sign'] as const) {
      const backend = new NtlmBackend({
        accounts: NtlmAccounts.load(users),
        dnsIdentity: 'localhost',
        // Generous limits: this suite makes many attempts from 127.0.0.1 on purpose; throttling has its unit tests.
        throttle: new LogonThrottle({ perUser: 100, perAddress: 100 }),
      });
      servers.set(level, await startNegotiateEcho({ backends: [backend], protectionLevel: level }));
    }
  });
  afterAll(async () => {
    for (const server of servers.values()) await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('EncryptAndSign: a sealed session echoes small and large messages (frames split at 63 KiB)', async () => {
    const large = pattern(100_000);
    const result = await runNnsClient(
      servers.get('EncryptAndSign')!.port,
      'echo',
      ['--message', '68656c6c6f', '--pattern', '100000'],
      alice(),
    );
    expect(result).toMatchObject({ result: 'ok', encrypted_flag: true });
    expect(result.replies).toEqual(['68656c6c6f', toHex(large)]);
    await closed('EncryptAndSign');
    const connection = last('EncryptAndSign');
    expect(connection.peer).toEqual({
      name: 'TESTDOM\\alice',
      sids: [],
      mechanism: '1.3.6.1.4.1.311.2.2.10',
      mechanismName: 'NTLM',
      spnego: true,
      protectionLevel: 'EncryptAndSign',
    });
    expect(toHex(new Uint8Array(connection.received.flatMap((c) => [...c])))).toBe(`68656c6c6f${toHex(large)}`);
    expect(connection.failure).toBeUndefined();
  });

  it('accepts an account given by its NT hash', async () => {
    const result = await runNnsClient(
      servers.get('EncryptAndSign')!.port,
      'echo',
      ['--message', '00'],
      as('TESTDOM:bob:Hunter2!'),
    );
    expect(result).toMatchObject({ result: 'ok', replies: ['00'] });
    await closed('EncryptAndSign');
    expect(last('EncryptAndSign').peer?.name).toBe('TESTDOM\\bob');
  });

  it('Sign: serves a signing-only client, and a sealing one', async () => {
    const signOnly = await runNnsClient(
      servers.get('Sign')!.port,
      'echo',
      ['--sign-only', '--message', '7369676e'],
      alice(),
    );
    expect(signOnly).toMatchObject({ result: 'ok', replies: ['7369676e'], encrypted_flag: false });
    await closed('Sign');
    expect(last('Sign').peer?.protectionLevel).toBe('Sign');
    const sealed = await runNnsClient(servers.get('Sign')!.port, 'echo', ['--message', '7365616c'], alice());
    expect(sealed).toMatchObject({ result: 'ok', replies: ['7365616c'] });
    await closed('Sign');
    expect(last('Sign').peer?.protectionLevel).toBe('EncryptAndSign');
  });

  const refusals: Array<{
    name: string;
    level: ProtectionLevel;
    run: () => Promise<Awaited<ReturnType<typeof runNnsClient>>>;
    reason: string;
  }> = [
    {
      name: 'a signing-only client under EncryptAndSign',
      level: 'EncryptAndSign',
      run: () => runNnsClient(servers.get('EncryptAndSign')!.port, 'echo', ['--sign-only', '--message', '00'], alice()),
      reason: 'ntlm.weak-flags',
    },
    {
      name: 'a wrong password',
      level: 'EncryptAndSign',
      run: () =>
        runNnsClient(servers.get('EncryptAndSign')!.port, 'echo', ['--message', '00'], as('TESTDOM:alice:Secret123?')),
      reason: 'ntlm.bad-proof',
    },
    {
      name: 'an unknown user',
      level: 'EncryptAndSign',
      run: () =>
        runNnsClient(
          servers.get('EncryptAndSign')!.port,
          'echo',
          ['--message', '00'],
          as('TESTDOM:mallory:Secret123!'),
        ),
      reason: 'ntlm.bad-proof',
    },
    {
      name: 'a user of another domain',
      level: 'Sign',
      run: () => runNnsClient(servers.get('Sign')!.port, 'echo', ['--message', '00'], as('OTHERDOM:alice:Secret123!')),
      reason: 'ntlm.bad-proof',
    },
  ];

  for (const refusal of refusals) {
    it(`refuses ${refusal.name} with logon denied, then serves the next client`, async () => {
      await expectLogonDenied(servers.get(refusal.level)!, await refusal.run(), refusal.reason);
      await stillServes(refusal.level);
    });
  }

  it('refuses a replayed AUTHENTICATE (recorded from a good session) on a new connection', async () => {
    const record = join(dir, 'recorded.json');
    const good = await runNnsClient(
      servers.get('EncryptAndSign')!.port,
      'echo',
      ['--record', record, '--message', '01'],
      alice(),
    );
    expect(good).toMatchObject({ result: 'ok' });
    const replay = await runNnsClient(servers.get('EncryptAndSign')!.port, 'replay', ['--replay', record], {});
    expect(replay).toEqual({ result: 'refused', status: LOGON_DENIED_PAYLOAD });
    await closed('EncryptAndSign');
    expect(last('EncryptAndSign').failure).toBe('ntlm.bad-proof'); // a fresh challenge: the old proof is worthless
    await stillServes('EncryptAndSign');
  });

  it('drops the connection on a tampered sealed byte, then serves the next client', async () => {
    const result = await runNnsClient(servers.get('EncryptAndSign')!.port, 'tamper', [], alice());
    expect(result).toEqual({ result: 'closed', first: '6669727374' });
    await closed('EncryptAndSign');
    expect(last('EncryptAndSign')).toMatchObject({
      failure: 'BadSignature',
      received: [new TextEncoder().encode('first')],
    });
    await stillServes('EncryptAndSign');
  });

  it('drops the connection on frames out of order, then serves the next client', async () => {
    const result = await runNnsClient(servers.get('EncryptAndSign')!.port, 'reorder', [], alice());
    expect(result).toEqual({ result: 'closed' });
    await closed('EncryptAndSign');
    expect(last('EncryptAndSign')).toMatchObject({ failure: 'OutOfSequence', received: [] });
    await stillServes('EncryptAndSign');
  });

  it('drops a tampered signing-only frame under Sign', async () => {
    const result = await runNnsClient(servers.get('Sign')!.port, 'tamper', ['--sign-only'], alice());
    expect(result).toMatchObject({ result: 'closed' });
    await closed('Sign');
    expect(last('Sign').failure).toBe('BadSignature');
    await stillServes('Sign');
  });

  describe.skipIf(noImpacket)('impacket', () => {
    it('refuses impacket NTLMv2, which sends no MIC', async () => {
      const result = await runNnsClient(
        servers.get('EncryptAndSign')!.port,
        'impacket',
        ['--user', 'TESTDOM\\alice', '--password', 'Secret123!'],
        {},
      );
      expect(result).toEqual({ result: 'refused', status: LOGON_DENIED_PAYLOAD });
      await closed('EncryptAndSign');
      // Its proof was right (the check comes after it): the missing MIC is what refused it.
      expect(last('EncryptAndSign').failure).toBe('ntlm.mic-missing');
      await stillServes('EncryptAndSign');
    });

    it('refuses impacket NTLMv1', async () => {
      const result = await runNnsClient(
        servers.get('EncryptAndSign')!.port,
        'impacket-v1',
        ['--user', 'TESTDOM\\alice', '--password', 'Secret123!'],
        {},
      );
      expect(result).toEqual({ result: 'refused', status: LOGON_DENIED_PAYLOAD });
      await closed('EncryptAndSign');
      expect(last('EncryptAndSign').failure).toBe('ntlm.v1');
      await stillServes('EncryptAndSign');
    });
  });
});
