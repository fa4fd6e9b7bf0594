/**
 * pac.ts and sid.ts on PACs captured from a Samba 4.17 AD DC (test/fixtures/pac/, written by gss-pac.ts's
 * acceptAndReadPac as `urn:mspac:` for the accounts of test/support/negotiate/samba-ad.sh): alice (idb-team, nested in
 * idb-readers, nested in the universal idb-all) with an AES256 ticket and with an RC4 ticket, bob (idb-writers,
 * domain local). The live check of the same against a running DC is samba-kerberos.peers.test.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  decodeLogonInfo,
  decodeUpnDnsInfo,
  identityFromPac,
  pacBuffer,
  PacBufferType,
  PacError,
  pacIdentity,
  parsePac,
  type KerbValidationInfo,
} from '../../../tcp-bridge/src/negotiate/pac.ts';
import {
  isSid,
  normalizeSid,
  SidError,
  sidToBytes,
  sidToString,
  sidWithRid,
} from '../../../tcp-bridge/src/negotiate/sid.ts';

const fixture = (name: string): Uint8Array =>
  new Uint8Array(readFileSync(join(import.meta.dirname, '../../fixtures/pac', `${name}.pac`)));
const DOMAIN_SID = 'S-1-5-21-1286368948-2002453513-2558269762';
const rid = (n: number): string => `${DOMAIN_SID}-${n}`;
const SIDS = {
  alice: rid(1103),
  bob: rid(1104),
  domainUsers: rid(513),
  team: rid(1109),
  readers: rid(1110),
  all: rid(1111),
  writers: rid(1112),
};

describe('sid.ts', () => {
  it('round-trips string and binary forms', () => {
    for (const sid of [
      'S-1-5-18',
      'S-1-18-1',
      'S-1-0-0',
      SIDS.alice,
      'S-1-5-21-4294967295-1-2-3',
      'S-1-0x0001FFFFFFFF-1',
    ]) {
      expect(sidToString(sidToBytes(sid))).toBe(sid);
    }
    expect(normalizeSid('s-1-5-21-1-2-3-500')).toBe('S-1-5-21-1-2-3-500');
    expect(sidToString(sidToBytes('S-1-4294967296-7'))).toBe('S-1-0x000100000000-7');
    expect(sidWithRid(DOMAIN_SID, 1103)).toBe(SIDS.alice);
  });

  it('refuses what is not a SID', () => {
    for (const bad of [
      '',
      'S-1',
      'S-2-5-18',
      'S-1-5-4294967296',
      'X-1-5',
      `S-1-5${'-1'.repeat(16)}`,
      'S-1-5-18x',
      'S-1-281474976710656',
      'S-1-5--18',
    ]) {
      expect(isSid(bad), bad).toBe(false);
    }
    expect(() => sidToString(new Uint8Array([1, 2, 0, 0, 0, 0, 0, 5, 1, 0, 0]))).toThrow(SidError);
    expect(() => sidToString(new Uint8Array([2, 0, 0, 0, 0, 0, 0, 5]))).toThrow(SidError);
    expect(() => sidToString(new Uint8Array([1, 0, 0, 0, 0, 0, 0, 5, 0]))).toThrow(/after the SID/);
  });
});

describe('pac.ts on Samba PACs', () => {
  it('alice (AES256 ticket): her SID, primary group, and idb-team, idb-readers, idb-all through nesting', () => {
    const buffers = parsePac(fixture('alice-aes256'));
    expect(buffers.map((b) => b.type)).toEqual([
      PacBufferType.LogonInfo,
      PacBufferType.ClientInfo,
      PacBufferType.UpnDnsInfo,
      PacBufferType.ServerChecksum,
      PacBufferType.PrivsvrChecksum,
      PacBufferType.TicketChecksum,
      PacBufferType.FullChecksum,
    ]);
    const info = decodeLogonInfo(pacBuffer(buffers, PacBufferType.LogonInfo)!);
    expect(info).toMatchObject({
      effectiveName: 'alice',
      userId: 1103,
      primaryGroupId: 513,
      logonServer: 'DC1',
      logonDomainName: 'SAMDOM',
      logonDomainId: DOMAIN_SID,
      userFlags: 0x20,
      resourceGroupDomainSid: undefined,
      resourceGroupIds: [],
    });
    expect(info.groupIds).toEqual([513, 1109, 1110, 1111].map((relativeId) => ({ relativeId, attributes: 7 })));
    expect(info.extraSids).toEqual([{ sid: 'S-1-18-1', attributes: 7 }]); // Authentication authority asserted identity
    expect(pacIdentity(info)).toEqual({
      account: 'SAMDOM\\alice',
      userName: 'alice',
      logonDomain: 'SAMDOM',
      logonDomainSid: DOMAIN_SID,
      userSid: SIDS.alice,
      primaryGroupSid: SIDS.domainUsers,
      groupSids: [SIDS.domainUsers, SIDS.team, SIDS.readers, SIDS.all, 'S-1-18-1'],
      disabledGroupSids: [],
    });
    expect(decodeUpnDnsInfo(pacBuffer(buffers, PacBufferType.UpnDnsInfo)!)).toEqual({
      upn: 'alice@samdom.test',
      dnsDomainName: 'SAMDOM.TEST',
      upnConstructed: false,
      samName: 'alice',
      sid: SIDS.alice,
    });
  });

  it('alice (RC4 ticket): the same identity (only the checksums differ)', () => {
    expect(identityFromPac(fixture('alice-rc4'))).toEqual(identityFromPac(fixture('alice-aes256')));
    const checksum = pacBuffer(parsePac(fixture('alice-rc4')), PacBufferType.ServerChecksum)!;
    expect(new DataView(checksum.buffer, checksum.byteOffset).getInt32(0, true)).toBe(-138); // HMAC-MD5 (KERB_CHECKSUM_HMAC_MD5)
  });

  it('bob: the domain local group idb-writers, in GroupIds', () => {
    const identity = identityFromPac(fixture('bob-aes256'));
    expect(identity).toMatchObject({ account: 'SAMDOM\\bob', userSid: SIDS.bob });
    expect(identity.groupSids).toEqual([SIDS.domainUsers, SIDS.writers, 'S-1-18-1']);
  });

  describe('pacIdentity rules', () => {
    const base = (): KerbValidationInfo =>
      decodeLogonInfo(pacBuffer(parsePac(fixture('alice-aes256')), PacBufferType.LogonInfo)!);

    it('ignores ExtraSids without LOGON_EXTRA_SIDS and resource groups without LOGON_RESOURCE_GROUPS', () => {
      const info = {
        ...base(),
        userFlags: 0,
        resourceGroupDomainSid: 'S-1-5-21-9-9-9',
        resourceGroupIds: [{ relativeId: 7, attributes: 7 }],
      };
      expect(pacIdentity(info).groupSids).toEqual([SIDS.domainUsers, SIDS.team, SIDS.readers, SIDS.all]);
      expect(pacIdentity({ ...info, userFlags: 0x220 }).groupSids).toContain('S-1-5-21-9-9-9-7');
    });

    it('keeps groups without SE_GROUP_ENABLED apart, never as groups', () => {
      const info = base();
      info.groupIds[1] = { relativeId: 1109, attributes: 0x1 };
      const identity = pacIdentity(info);
      expect(identity.groupSids).not.toContain(SIDS.team);
      expect(identity.disabledGroupSids).toEqual([SIDS.team]);
    });

    it('a UserId of 0 takes the user SID from the first ExtraSid', () => {
      const info = {
        ...base(),
        userId: 0,
        extraSids: [
          { sid: 'S-1-5-21-7-7-7-1000', attributes: 7 },
          { sid: 'S-1-18-1', attributes: 7 },
        ],
      };
      const identity = pacIdentity(info);
      expect(identity.userSid).toBe('S-1-5-21-7-7-7-1000');
      expect(identity.groupSids).not.toContain('S-1-5-21-7-7-7-1000');
      expect(() => pacIdentity({ ...info, extraSids: [] })).toThrow(PacError);
    });
  });

  describe('malformed input is a PacError, never another exception or a partial answer', () => {
    const logonInfo = pacBuffer(parsePac(fixture('alice-aes256')), PacBufferType.LogonInfo)!;

    it('every truncation of the logon info and of the PAC', () => {
      for (let n = 0; n < logonInfo.length; n++) {
        const cut = logonInfo.subarray(0, n);
        let outcome: unknown;
        try {
          decodeLogonInfo(cut);
          outcome = 'decoded';
        } catch (error) {
          outcome = error;
        }
        expect(outcome instanceof PacError, `at ${n}: ${String(outcome)}`).toBe(true);
      }
      const pac = fixture('alice-aes256');
      for (let n = 0; n < pac.length; n += 7) {
        expect(() => identityFromPac(pac.subarray(0, n)), `at ${n}`).toThrow(PacError);
      }
    });

    it('random byte changes decode or throw PacError', () => {
      fc.assert(
        fc.property(
          fc.array(fc.tuple(fc.nat(logonInfo.length - 1), fc.integer({ min: 0, max: 255 })), {
            minLength: 1,
            maxLength: 8,
          }),
          (changes) => {
            const bytes = logonInfo.slice();
            for (const [at, value] of changes) bytes[at] = value;
            try {
              pacIdentity(decodeLogonInfo(bytes));
            } catch (error) {
              if (!(error instanceof PacError)) throw error;
            }
          },
        ),
        { numRuns: 3000 },
      );
    });

    it('counts beyond the buffer are refused before anything is allocated for them', () => {
      const bytes = logonInfo.slice();
      // GroupCount is the u32 at offset 16 (headers) + 4 (referent) + 48 (times) + 48 (strings) + 12.
      new DataView(bytes.buffer).setUint32(16 + 4 + 48 + 48 + 12, 0x7fffffff, true);
      expect(() => decodeLogonInfo(bytes)).toThrow(/GroupIds count 2147483647 does not fit/);
    });

    it('a PAC header that points outside, a repeated buffer', () => {
      const pac = fixture('alice-aes256').slice();
      const view = new DataView(pac.buffer);
      view.setBigUint64(8 + 8, BigInt(pac.length), true);
      expect(() => parsePac(pac)).toThrow(/outside the PAC/);
      const twice = fixture('alice-aes256').slice();
      new DataView(twice.buffer).setUint32(8 + 16, PacBufferType.LogonInfo, true);
      expect(() => identityFromPac(twice)).toThrow(/appears 2 times/);
    });
  });
});
