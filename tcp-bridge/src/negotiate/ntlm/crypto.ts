/**
 * The NTLMv2 key schedule of MS-NLMP 3.3.2, 3.4.5 and 6: NTOWFv2, NTProofStr, the session base and exported session
 * keys, the MIC, SIGNKEY and SEALKEY (extended session security, 128-bit keys, key exchange). HMAC-MD5 and MD5 come
 * from node:crypto; MD4 and RC4, which OpenSSL 3 refuses, from md4.ts and rc4.ts.
 */

import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { md4 } from './md4.ts';
import { MIC_OFFSET, utf16le } from './messages.ts';
import { rc4k } from './rc4.ts';

export function hmacMd5(key: Uint8Array, ...parts: Uint8Array[]): Uint8Array {
  const hmac = createHmac('md5', key);
  for (const part of parts) hmac.update(part);
  return new Uint8Array(hmac.digest());
}

const md5 = (...parts: Uint8Array[]): Uint8Array => {
  const hash = createHash('md5');
  for (const part of parts) hash.update(part);
  return new Uint8Array(hash.digest());
};

/**
 * Upper case as .NET's ToUpperInvariant and Windows do it for NTOWFv2: one character to one character (simple case
 * mapping), so `ß` stays `ß` where JavaScript's full mapping would give `SS`.
 */
export function upperInvariant(text: string): string {
  let out = '';
  for (const ch of text) {
    const upper = ch.toUpperCase();
    out += upper.length === ch.length ? upper : ch;
  }
  return out;
}

/** NTOWFv1 = MD4(UNICODE(Passwd)): the NT hash. */
export function ntHash(password: string): Uint8Array {
  return md4(utf16le(password));
}

/** NTOWFv2 = HMAC_MD5(NTOWFv1, UNICODE(Uppercase(User) ‖ UserDom)). */
export function ntowfv2(hash: Uint8Array, user: string, domain: string): Uint8Array {
  return hmacMd5(hash, utf16le(upperInvariant(user) + domain));
}

/** NTProofStr = HMAC_MD5(ResponseKeyNT, ServerChallenge ‖ temp), temp being the NTLMv2 client challenge blob. */
export function ntProofStr(responseKeyNt: Uint8Array, serverChallenge: Uint8Array, blob: Uint8Array): Uint8Array {
  return hmacMd5(responseKeyNt, serverChallenge, blob);
}

/** SessionBaseKey = HMAC_MD5(ResponseKeyNT, NTProofStr); for NTLMv2 it is also the KeyExchangeKey. */
export function sessionBaseKey(responseKeyNt: Uint8Array, proof: Uint8Array): Uint8Array {
  return hmacMd5(responseKeyNt, proof);
}

/** With KEY_EXCH: ExportedSessionKey = RC4K(KeyExchangeKey, EncryptedRandomSessionKey) (RC4 is its own inverse). */
export function exportedSessionKey(keyExchangeKey: Uint8Array, encryptedRandomSessionKey: Uint8Array): Uint8Array {
  return rc4k(keyExchangeKey, encryptedRandomSessionKey);
}

/** MIC = HMAC_MD5(ExportedSessionKey, NEGOTIATE ‖ CHALLENGE ‖ AUTHENTICATE with its MIC field zeroed). */
export function computeMic(
  exported: Uint8Array,
  negotiate: Uint8Array,
  challenge: Uint8Array,
  authenticate: Uint8Array,
): Uint8Array {
  const zeroed = authenticate.slice();
  zeroed.fill(0, MIC_OFFSET, MIC_OFFSET + 16);
  return hmacMd5(exported, negotiate, challenge, zeroed);
}

const MAGIC = {
  clientSign: 'session key to client-to-server signing key magic constant\0',
  serverSign: 'session key to server-to-client signing key magic constant\0',
  clientSeal: 'session key to client-to-server sealing key magic constant\0',
  serverSeal: 'session key to server-to-client sealing key magic constant\0',
} as const;

/** SIGNKEY and SEALKEY (MS-NLMP 3.4.5.2, 3.4.5.3) with extended session security and 128-bit keys. */
export function sessionKeys(exported: Uint8Array): {
  clientSign: Uint8Array;
  serverSign: Uint8Array;
  clientSeal: Uint8Array;
  serverSeal: Uint8Array;
} {
  const derive = (magic: string): Uint8Array => md5(exported, new TextEncoder().encode(magic));
  return {
    clientSign: derive(MAGIC.clientSign),
    serverSign: derive(MAGIC.serverSign),
    clientSeal: derive(MAGIC.clientSeal),
    serverSeal: derive(MAGIC.serverSeal),
  };
}

/** Constant-time equality of two byte strings (their lengths are not secret). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
