/**
 * The NTLM functions on published vectors: MD4 and RC4, then MS-NLMP section 4.2.4 (NTLMv2 authentication and
 * GSS_WrapEx with key exchange).
 */
import { describe, expect, it } from 'vitest';
import { md4 } from '../../../tcp-bridge/src/negotiate/ntlm/md4.ts';
import {
  AvId,
  exportedSessionKey,
  NtlmSessionSecurity,
  ntHash,
  ntowfv2,
  ntProofStr,
  parseAuthenticate,
  parseNtlmV2Response,
  sessionBaseKey,
  sessionKeys,
  upperInvariant,
  utf16le,
} from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import { Rc4, rc4k } from '../../../tcp-bridge/src/negotiate/ntlm/rc4.ts';
import { ascii, hex, toHex } from '../../support/negotiate/negotiate.ts';

describe('MD4 and RC4', () => {
  it('MD4 gives the RFC 1320 test suite digests', () => {
    const suite: Array<[string, string]> = [
      ['', '31d6cfe0d16ae931b73c59d7e0c089c0'],
      ['a', 'bde52cb31de33e46245e05fbdbd6fb24'],
      ['abc', 'a448017aaf21d8525fc10ae87aa6729d'],
      ['message digest', 'd9130a8164549fe818874806e1c7014b'],
      ['abcdefghijklmnopqrstuvwxyz', 'd79e1c308aa5bbcdeea8ed63df412da9'],
      ['ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789', '043f8582f241db351ce627e153e7f0e4'],
      ['1234567890'.repeat(8), 'e33b4ddc9c38f2199c3e7b164fcc0536'],
    ];
    for (const [message, digest] of suite) expect(toHex(md4(ascii(message)))).toBe(digest);
  });

  it('RC4 gives the classic test vectors and keeps its state across calls', () => {
    expect(toHex(rc4k(ascii('Key'), ascii('Plaintext')))).toBe('bbf316e8d940af0ad3');
    expect(toHex(rc4k(ascii('Wiki'), ascii('pedia')))).toBe('1021bf0420');
    expect(toHex(rc4k(ascii('Secret'), ascii('Attack at dawn')))).toBe('45a01f645fc35b383552544b9bf5');
    const stream = new Rc4(ascii('Secret'));
    const saved = stream.clone();
    const pieces = [stream.process(ascii('Attack ')), stream.process(ascii('at dawn'))];
    expect(toHex(new Uint8Array([...pieces[0]!, ...pieces[1]!]))).toBe('45a01f645fc35b383552544b9bf5');
    stream.restore(saved);
    expect(toHex(stream.process(ascii('Attack')))).toBe('45a01f645fc3');
  });
});

describe('MS-NLMP 4.2.4 NTLMv2 vectors', () => {
  // 4.2.1 common values; 4.2.4.3 the AUTHENTICATE_MESSAGE (no MIC: the example predates it).
  const serverChallenge = hex('0123456789abcdef');
  const randomSessionKey = new Uint8Array(16).fill(0x55);
  const authenticate = hex(`
    4e544c4d53535000 03000000 18001800 6c000000 54005400 84000000 0c000c00 48000000 08000800 54000000 10001000 5c000000
    10001000 d8000000 358288e2 0501280a0000000f 44006f006d00610069006e00 5500730065007200 43004f004d0050005500540045005200
    86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa 68cd0ab851e51c96aabc927bebef6a1c 0101000000000000 0000000000000000
    aaaaaaaaaaaaaaaa 00000000 02000c0044006f006d00610069006e00 01000c005300650072007600650072000000000000000000
    c5dad2544fc9799094ce1ce90bc9d03e`);

  it('computes NTOWFv1, NTOWFv2 and the session base key (4.2.2.1.2, 4.2.4.1.1, 4.2.4.1.2)', () => {
    expect(toHex(ntHash('Password'))).toBe('a4f49c406510bdcab6824ee7c30fd852');
    const responseKey = ntowfv2(ntHash('Password'), 'User', 'Domain');
    expect(toHex(responseKey)).toBe('0c868a403bfd7a93a3001ef22ef02e3f');
    expect(toHex(sessionBaseKey(responseKey, hex('68cd0ab851e51c96aabc927bebef6a1c')))).toBe(
      '8de40ccadbc14a82f15cb0ad0de95ca3',
    );
  });

  it('reads the example AUTHENTICATE message and checks its NTProofStr (4.2.4.2.2, 4.2.4.3)', () => {
    const message = parseAuthenticate(authenticate)!;
    expect(message).toMatchObject({ domain: 'Domain', user: 'User', workstation: 'COMPUTER', mic: undefined });
    expect(message.flags >>> 0).toBe(0xe2888235);
    const response = parseNtlmV2Response(message.ntResponse)!;
    expect(response.time).toBe(0n);
    expect(toHex(response.clientChallenge)).toBe('aaaaaaaaaaaaaaaa');
    expect(response.avPairs.map((p) => p.id)).toEqual([AvId.NbDomainName, AvId.NbComputerName]);
    const responseKey = ntowfv2(ntHash('Password'), message.user, message.domain);
    expect(toHex(ntProofStr(responseKey, serverChallenge, response.blob))).toBe('68cd0ab851e51c96aabc927bebef6a1c');
    expect(toHex(response.proof)).toBe('68cd0ab851e51c96aabc927bebef6a1c');
    // Key exchange (4.2.4.2.3): the encrypted random session key opens to the RandomSessionKey.
    const exported = exportedSessionKey(sessionBaseKey(responseKey, response.proof), message.encryptedRandomSessionKey);
    expect(exported).toEqual(randomSessionKey);
  });

  it('seals and signs as GSS_WrapEx with key exchange does (4.2.4.4)', () => {
    const keys = sessionKeys(randomSessionKey);
    expect(toHex(keys.clientSeal)).toBe('59f600973cc4960a25480a7c196e4c58');
    expect(toHex(keys.clientSign)).toBe('4788dc861b4782f35d43fd98fe1a2d39');
    const plaintext = utf16le('Plaintext');
    const client = new NtlmSessionSecurity(randomSessionKey, 'client', true);
    const wrapped = client.wrap(plaintext);
    expect(toHex(wrapped.subarray(16))).toBe('54e50165bf1936dc996020c1811b0f06fb5f');
    expect(toHex(wrapped.subarray(0, 16))).toBe('010000007fb38ec5c55d497600000000');
    // The acceptor's side opens it with the same keys.
    const server = new NtlmSessionSecurity(randomSessionKey, 'server', true);
    expect(server.unwrap(wrapped)).toEqual(plaintext);
  });

  it('upper-cases user names one character to one, as Windows does for NTOWFv2', () => {
    expect(upperInvariant('alice')).toBe('ALICE');
    expect(upperInvariant('straße')).toBe('STRAßE');
    expect(upperInvariant('élodie')).toBe('ÉLODIE');
  });
});
