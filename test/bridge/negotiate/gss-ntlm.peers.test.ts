/**
 * NegotiateStream with NTLM through gss-ntlmssp (BRIDGE_NTLM_BACKEND=gssapi: GssapiBackend given the users file,
 * tcp-bridge/src/negotiate/gssapi/) against the same real initiators as e2e.peers.test.ts: MIT GSSAPI's
 * SPNEGO with gss-ntlmssp and impacket's NTLM client, through support/negotiate/nns-client.py, against stream.ts + the
 * GSSAPI backend in support/negotiate/negotiate-echo.ts, which echoes what it unwraps. The backend itself is driven
 * directly with support/negotiate/ntlm-client.ts for what a real initiator does not send (a bad MIC, a foreign SPN,
 * garbage).
 *
 * This file: sessions and refusals over the network; gss-ntlm-backend.peers.test.ts drives the backend directly and
 * checks its configuration (the servers: gss-ntlm-echo.ts).
 *
 * Needs /usr/bin/python3 with gssapi, gss-ntlmssp (which the acceptor loads too) and impacket: Debian packages
 * python3-gssapi gss-ntlmssp python3-impacket. Without them the suites are skipped, and say so.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OID, type ProtectionLevel } from '../../../tcp-bridge/src/negotiate/security-context.ts';
import { expectLogonDenied } from '../../support/negotiate/negotiate-echo.ts';
import { LOGON_DENIED_PAYLOAD, pattern, toHex } from '../../support/negotiate/negotiate.ts';
import { useGssNtlmEcho } from './gss-ntlm-echo.ts';
import { needPeers, PEERS } from '../../support/peers.ts';

const noInitiators = needPeers('negotiate gss-ntlmssp', PEERS.gssInitiators);
const noImpacket = needPeers('negotiate gss-ntlmssp impacket', PEERS.impacket);

describe.skipIf(noInitiators)('NegotiateStream with NTLM through gss-ntlmssp (GSSAPI backend)', () => {
  const { dir, as, alice, server, last, closed, client, stillServes } = useGssNtlmEcho();

  describe('sessions', () => {
    it('EncryptAndSign: a sealed session echoes small and large messages (frames split at 63 KiB), as TESTDOM\\alice', async () => {
      const result = await client('EncryptAndSign', 'echo', ['--message', '68656c6c6f', '--pattern', '100000']);
      expect(result).toMatchObject({ result: 'ok', encrypted_flag: true });
      expect(result.replies).toEqual(['68656c6c6f', toHex(pattern(100_000))]);
      await closed('EncryptAndSign');
      const connection = last('EncryptAndSign');
      expect(connection.peer).toEqual({
        name: 'TESTDOM\\alice',
        sids: [],
        mechanism: OID.ntlm,
        mechanismName: 'NTLM',
        spnego: true,
        protectionLevel: 'EncryptAndSign',
      });
      expect(connection.received.map((c) => c.length)).toEqual([5, 63 * 1024, 100_000 - 63 * 1024]);
      expect(toHex(Buffer.concat(connection.received))).toBe(`68656c6c6f${toHex(pattern(100_000))}`);
      expect(connection.failure).toBeUndefined();
    });

    it("names the peer by the users file's line: the library's trailing NUL dropped, the user's case the file's", async () => {
      expect(await client('EncryptAndSign', 'echo', ['--message', '00'], as('TESTDOM:ALICE:Secret123!'))).toMatchObject(
        { result: 'ok', replies: ['00'] },
      );
      await closed('EncryptAndSign');
      expect(last('EncryptAndSign').peer?.name).toBe('TESTDOM\\alice');
      // A line with an empty domain: the CHALLENGE's NetBIOS computer name, as the TypeScript acceptor names it.
      expect(await client('EncryptAndSign', 'echo', ['--message', '01'], as(':carol:Carol789!'))).toMatchObject({
        result: 'ok',
        replies: ['01'],
      });
      await closed('EncryptAndSign');
      expect(last('EncryptAndSign').peer?.name).toBe('LOCALHOST\\carol');
    });

    it('Sign: serves a signing-only client in both frame forms (sealed as gss-ntlmssp sends, MS-NLMP signature ‖ plaintext as Windows SSPI does), and a sealing one', async () => {
      for (const args of [['--sign-only'], ['--sign-only', '--plain-sign']]) {
        const result = await client('Sign', 'echo', [...args, '--message', '7369676e', '--pattern', '70000']);
        expect(result).toMatchObject({
          result: 'ok',
          encrypted_flag: false,
          replies: ['7369676e', toHex(pattern(70_000))],
        });
        await closed('Sign');
        expect(last('Sign').peer).toMatchObject({ name: 'TESTDOM\\alice', protectionLevel: 'Sign' });
        expect(last('Sign').failure).toBeUndefined();
      }
      const sealed = await client('Sign', 'echo', ['--message', '7365616c']);
      expect(sealed).toMatchObject({ result: 'ok', encrypted_flag: true, replies: ['7365616c'] });
      await closed('Sign');
      expect(last('Sign').peer?.protectionLevel).toBe('EncryptAndSign');
    });
  });

  describe('refusals, each followed by a client served', () => {
    const refusals: Array<{
      name: string;
      level: ProtectionLevel;
      args: string[];
      env: () => Record<string, string>;
      reason: string;
    }> = [
      {
        name: 'a signing-only client under EncryptAndSign (the gate, at the NEGOTIATE)',
        level: 'EncryptAndSign',
        args: ['--sign-only'],
        env: alice,
        reason: 'ntlm.weak-flags',
      },
      {
        name: 'a wrong password (the library)',
        level: 'EncryptAndSign',
        args: [],
        env: () => as('TESTDOM:alice:Secret123?'),
        reason: 'gssapi.bad-proof',
      },
      {
        name: 'an unknown user (the library)',
        level: 'EncryptAndSign',
        args: [],
        env: () => as('TESTDOM:mallory:Secret123!'),
        reason: 'gssapi.bad-proof',
      },
      {
        name: 'a user of another domain (the library)',
        level: 'Sign',
        args: [],
        env: () => as('OTHERDOM:alice:Secret123!'),
        reason: 'gssapi.bad-proof',
      },
      // NTOWFv2 hashes the domain as typed; gss-ntlmssp tries the file's spelling and none, not the client's.
      {
        name: "the right password with the domain in another case (gss-ntlmssp's NTOWFv2)",
        level: 'Sign',
        args: [],
        env: () => as('testdom:alice:Secret123!'),
        reason: 'gssapi.bad-proof',
      },
    ];
    for (const refusal of refusals) {
      it(`refuses ${refusal.name} with logon denied`, async () => {
        await expectLogonDenied(
          server(refusal.level),
          await client(refusal.level, 'echo', [...refusal.args, '--message', '00'], refusal.env()),
          refusal.reason,
        );
        await stillServes(refusal.level);
      });
    }

    it("refuses a replayed NEGOTIATE + AUTHENTICATE (recorded from a good session): the gate's timestamp check", async () => {
      const record = join(dir, 'recorded.json');
      expect(await client('EncryptAndSign', 'echo', ['--record', record, '--message', '01'])).toMatchObject({
        result: 'ok',
      });
      const replay = await client('EncryptAndSign', 'replay', ['--replay', record], {});
      expect(replay).toEqual({ result: 'refused', status: LOGON_DENIED_PAYLOAD });
      await closed('EncryptAndSign');
      expect(last('EncryptAndSign').failure).toBe('ntlm.timestamp');
      await stillServes('EncryptAndSign');
    });

    it('drops the connection on a tampered sealed byte (the library)', async () => {
      const result = await client('EncryptAndSign', 'tamper', []);
      expect(result).toEqual({ result: 'closed', first: '6669727374' });
      await closed('EncryptAndSign');
      expect(last('EncryptAndSign')).toMatchObject({
        failure: 'BadSignature',
        received: [new TextEncoder().encode('first')],
      });
      await stillServes('EncryptAndSign');
    });

    it('drops the connection on frames out of order (the sequence number checked before the library)', async () => {
      const result = await client('EncryptAndSign', 'reorder', []);
      expect(result).toEqual({ result: 'closed' });
      await closed('EncryptAndSign');
      expect(last('EncryptAndSign')).toMatchObject({ failure: 'OutOfSequence', received: [] });
      await stillServes('EncryptAndSign');
    });

    it('drops a tampered signing-only frame under Sign, in either form', async () => {
      for (const args of [['--sign-only'], ['--sign-only', '--plain-sign']]) {
        const result = await client('Sign', 'tamper', args);
        expect(result).toMatchObject({ result: 'closed', first: '6669727374' });
        await closed('Sign');
        expect(last('Sign').failure).toBe('BadSignature');
        await stillServes('Sign');
      }
    });

    describe.skipIf(noImpacket)('impacket', () => {
      const cases: Array<{ name: string; mode: string; args: string[]; reason: string }> = [
        {
          name: 'impacket as it is: its 32-byte NEGOTIATE, which gss-ntlmssp 1.2 cannot read',
          mode: 'impacket',
          args: [],
          reason: 'ntlm.negotiate-no-version',
        },
        // gss-ntlmssp checks a MIC only when MsvAvFlags announces one: the gate requires it.
        {
          name: 'impacket NTLMv2 with a Version field, which sends no MIC',
          mode: 'impacket',
          args: ['--version-field'],
          reason: 'ntlm.mic-missing',
        },
        // gss-ntlmssp refuses it too at its default LM_COMPAT_LEVEL 3, not as a domain member.
        { name: 'impacket NTLMv1', mode: 'impacket-v1', args: ['--version-field'], reason: 'ntlm.v1' },
      ];
      for (const { name, mode, args, reason } of cases) {
        it(`refuses ${name}`, async () => {
          const result = await client(
            'EncryptAndSign',
            mode,
            [...args, '--user', 'TESTDOM\\alice', '--password', 'Secret123!'],
            {},
          );
          expect(result).toEqual({ result: 'refused', status: LOGON_DENIED_PAYLOAD });
          await closed('EncryptAndSign');
          expect(last('EncryptAndSign').failure).toBe(reason);
          await stillServes('EncryptAndSign');
        });
      }
    });
  });
});
