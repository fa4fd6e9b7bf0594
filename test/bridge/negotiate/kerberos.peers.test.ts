/**
 * NegotiateStream with Kerberos through the system GSSAPI (tcp-bridge/src/negotiate/gssapi/) against a real MIT
 * KDC started in a temp folder by ../shared/tools/krb5-test-realm.sh (support/negotiate/krb5-realm.ts): alice's ticket
 * drives support/negotiate/nns-client.py (python3-gssapi: MIT's SPNEGO, or SPNEGO built by the script the way Windows
 * lists its OIDs, or raw krb5) against stream.ts + the GSSAPI backend in support/negotiate/negotiate-echo.ts, which
 * echoes what it unwraps.
 *
 * This file: sealed and signed sessions; kerberos-refusals.peers.test.ts and kerberos-backend.peers.test.ts hold the
 * refusals, the backend driven directly and its configuration (the realm and servers: kerberos-echo.ts).
 *
 * Needs krb5-kdc, krb5-admin-server, krb5-user, python3-gssapi and libgssapi-krb5-2; without them (or without
 * ../shared) the suite is skipped and says what is missing.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkKeytab, GssFlag, kerberosPeerName } from '../../../tcp-bridge/src/negotiate/gssapi/index.ts';
import { OID } from '../../../tcp-bridge/src/negotiate/security-context.ts';
import { describeShared } from '../../support/corpus.ts';
import { pattern, toHex } from '../../support/negotiate/negotiate.ts';
import { ALICE, useKerberosEcho } from './kerberos-echo.ts';
import { needPeers, PEERS } from '../../support/peers.ts';

const missing = needPeers('negotiate kerberos', PEERS.krb5);

describeShared('NegotiateStream with Kerberos (MIT KDC, GSSAPI backend through koffi)', () => {
  describe.skipIf(missing)('against a KDC of realm TEST.LOCAL', () => {
    const kdc = useKerberosEcho();
    const { last, closed, client } = kdc;

    describe('EncryptAndSign', () => {
      it('MIT SPNEGO: a sealed session echoes small and large messages (frames split at 63 KiB), as alice@TEST.LOCAL', async () => {
        const result = await client('EncryptAndSign', 'echo', ['--message', '68656c6c6f', '--pattern', '100000']);
        expect(result).toMatchObject({ result: 'ok', encrypted_flag: true, mutual: true });
        expect(result.replies).toEqual(['68656c6c6f', toHex(pattern(100_000))]);
        await closed('EncryptAndSign');
        const connection = last('EncryptAndSign');
        expect(connection.peer).toEqual({
          name: ALICE,
          sids: [],
          mechanism: OID.kerberos,
          mechanismName: 'Kerberos',
          spnego: true,
          protectionLevel: 'EncryptAndSign',
        });
        expect(connection.received.map((c) => c.length)).toEqual([5, 63 * 1024, 100_000 - 63 * 1024]);
        expect(toHex(Buffer.concat(connection.received))).toBe(`68656c6c6f${toHex(pattern(100_000))}`);
        expect(connection.failure).toBeUndefined();
      });

      it('as Windows sends it: Microsoft OID first (also in the token header), wrap tokens rotated by RRC 28', async () => {
        const result = await client('EncryptAndSign', 'echo', [
          '--spnego-ms',
          '--ms-inner-oid',
          '--rrc',
          '28',
          '--message',
          '00',
          '--pattern',
          '70000',
        ]);
        expect(result).toMatchObject({ result: 'ok', replies: ['00', toHex(pattern(70_000))] });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign').peer).toEqual({
          name: ALICE,
          sids: [],
          mechanism: OID.kerberosMicrosoft,
          mechanismName: 'Kerberos',
          spnego: true,
          protectionLevel: 'EncryptAndSign',
        });
      });

      it("with .NET's NegotiateStream flags (Confidentiality + MutualAuth, no sequence detection asked)", async () => {
        const result = await client('EncryptAndSign', 'echo', [
          '--dotnet-flags',
          '--message',
          '01',
          '--pattern',
          '65536',
        ]);
        expect(result).toMatchObject({ result: 'ok', replies: ['01', toHex(pattern(65_536))] });
        expect((result.flags as number) & (GssFlag.Replay | GssFlag.Sequence)).toBe(0);
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign').peer?.name).toBe(ALICE);
      });

      it('raw Kerberos without SPNEGO', async () => {
        const result = await client('EncryptAndSign', 'echo', ['--raw-krb5', '--message', '02']);
        expect(result).toMatchObject({ result: 'ok', replies: ['02'] });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign').peer).toMatchObject({ name: ALICE, mechanism: OID.kerberos, spnego: false });
      });

      it('exchanges mechListMICs (gss_get_mic / gss_verify_mic) when Kerberos was not the first choice', async () => {
        const result = await client('EncryptAndSign', 'echo', ['--other-mech-first', '--message', '03']);
        expect(result).toMatchObject({ result: 'ok', replies: ['03'] });
        await closed('EncryptAndSign');
        expect(last('EncryptAndSign').peer).toMatchObject({
          name: ALICE,
          mechanism: OID.kerberosMicrosoft,
          spnego: true,
        });
      });
    });

    describe('Sign', () => {
      it('serves a signing-only client (no confidentiality flag) with signed frames, RRC 0 and 12', async () => {
        for (const rrc of ['0', '12']) {
          const result = await client('Sign', 'echo', [
            '--sign-only',
            '--no-ci-flags',
            '--rrc',
            rrc,
            '--message',
            '7369676e',
            '--pattern',
            '70000',
          ]);
          expect(result).toMatchObject({
            result: 'ok',
            encrypted_flag: false,
            replies: ['7369676e', toHex(pattern(70_000))],
          });
          await closed('Sign');
          expect(last('Sign').peer).toMatchObject({ name: ALICE, protectionLevel: 'Sign' });
        }
      });

      it("with .NET's Sign flags (Integrity, ReplayDetect, SequenceDetect, MutualAuth)", async () => {
        const result = await client('Sign', 'echo', [
          '--sign-only',
          '--no-ci-flags',
          '--dotnet-flags',
          '--message',
          '04',
        ]);
        expect(result).toMatchObject({ result: 'ok', encrypted_flag: false, replies: ['04'] });
        await closed('Sign');
        expect(last('Sign').peer?.protectionLevel).toBe('Sign');
      });

      it('serves a sealing client too (EncryptAndSign)', async () => {
        const result = await client('Sign', 'echo', ['--message', '7365616c']);
        expect(result).toMatchObject({ result: 'ok', encrypted_flag: true, replies: ['7365616c'] });
        await closed('Sign');
        expect(last('Sign').peer?.protectionLevel).toBe('EncryptAndSign');
      });
    });
  });
});

// Without ../shared or the packages, the pure checks still run.
describe('gssapi backend without a KDC', () => {
  it('names peers user@REALM, the realm upper-cased, escapes kept', () => {
    expect(kerberosPeerName('alice@test.local')).toBe('alice@TEST.LOCAL');
    expect(kerberosPeerName('alice@TEST.LOCAL\0')).toBe('alice@TEST.LOCAL');
    expect(kerberosPeerName('bob\\@upn.example@corp.example')).toBe('bob\\@upn.example@CORP.EXAMPLE');
    expect(kerberosPeerName('host/web.corp.example@CORP.EXAMPLE')).toBe('host/web.corp.example@CORP.EXAMPLE');
    expect(kerberosPeerName('DOMAIN\\user')).toBe('DOMAIN\\user');
  });

  it('checkKeytab refuses a keytab readable by others', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keytab-'));
    try {
      const path = join(dir, 'k');
      writeFileSync(path, 'x');
      chmodSync(path, 0o644);
      expect(() => checkKeytab(`FILE:${path}`)).toThrow(/mode 644/);
      chmodSync(path, 0o600);
      expect(checkKeytab(`FILE:${path}`)).toBe(path);
      expect(() => checkKeytab('relative/path')).toThrow(/not a file keytab/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
