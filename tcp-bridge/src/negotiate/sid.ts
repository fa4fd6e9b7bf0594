/**
 * Windows security identifiers (MS-DTYP 2.4.2): the binary form (what a PAC's RPC_SID and LDAP's objectSid carry) and
 * the string form `S-1-5-21-…-1105` (what roles files, winbind and logs use). Shared by pac.ts, ad-groups.ts and
 * winbind.ts.
 *
 * Decisions:
 * - The string form is canonical as Windows prints it: decimal identifier authority below 2^32, `0x` and 12 hex
 *   digits above; no leading zeros; at most 15 sub-authorities. `normalizeSid` upper-cases the `S` and refuses
 *   anything else, so SIDs compare as strings.
 */

export class SidError extends Error {
  override readonly name = 'SidError';
}

/** Most sub-authorities a SID may have (SID_MAX_SUB_AUTHORITIES). */
const MAX_SUB_AUTHORITIES = 15;

/**
 * The SID in `bytes` at `offset` (Revision, SubAuthorityCount, 6-byte big-endian IdentifierAuthority, then
 * SubAuthorityCount little-endian 32-bit sub-authorities), and its length in bytes. Throws SidError.
 */
export function readSid(bytes: Uint8Array, offset = 0): { sid: string; length: number } {
  if (offset + 8 > bytes.length) throw new SidError('SID: truncated header');
  const revision = bytes[offset]!;
  const count = bytes[offset + 1]!;
  if (revision !== 1) throw new SidError(`SID: revision ${revision}, expected 1`);
  if (count > MAX_SUB_AUTHORITIES) throw new SidError(`SID: ${count} sub-authorities (at most ${MAX_SUB_AUTHORITIES})`);
  const length = 8 + 4 * count;
  if (offset + length > bytes.length) throw new SidError('SID: truncated sub-authorities');
  let authority = 0n;
  for (let i = 0; i < 6; i++) authority = (authority << 8n) | BigInt(bytes[offset + 2 + i]!);
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, length);
  const parts = [
    'S',
    '1',
    authority < 2n ** 32n ? authority.toString() : `0x${authority.toString(16).toUpperCase().padStart(12, '0')}`,
  ];
  for (let i = 0; i < count; i++) parts.push(String(view.getUint32(8 + 4 * i, true)));
  return { sid: parts.join('-'), length };
}

/** The string form of a whole binary SID (LDAP objectSid). Throws SidError when bytes is not exactly one SID. */
export function sidToString(bytes: Uint8Array): string {
  const { sid, length } = readSid(bytes, 0);
  if (length !== bytes.length) throw new SidError(`SID: ${bytes.length - length} bytes after the SID`);
  return sid;
}

/** The binary form of a SID string. Throws SidError. */
export function sidToBytes(text: string): Uint8Array {
  const { authority, subAuthorities } = parseSid(text);
  const out = new Uint8Array(8 + 4 * subAuthorities.length);
  out[0] = 1;
  out[1] = subAuthorities.length;
  for (let i = 0; i < 6; i++) out[2 + i] = Number((authority >> BigInt(8 * (5 - i))) & 0xffn);
  const view = new DataView(out.buffer);
  for (const [i, value] of subAuthorities.entries()) view.setUint32(8 + 4 * i, value, true);
  return out;
}

/** The canonical string form of a SID string (`s-1-5-21-…` becomes `S-1-5-21-…`). Throws SidError. */
export function normalizeSid(text: string): string {
  return sidToString(sidToBytes(text));
}

/** Whether `text` is a SID string (`S-1-…`). */
export function isSid(text: string): boolean {
  try {
    parseSid(text);
    return true;
  } catch {
    return false;
  }
}

/** `domain` (a SID string) with `rid` appended: the SID of an account or group of that domain. */
export function sidWithRid(domain: string, rid: number): string {
  if (!Number.isInteger(rid) || rid < 0 || rid > 0xffffffff) throw new SidError(`RID ${rid} out of range`);
  const { subAuthorities } = parseSid(domain);
  if (subAuthorities.length >= MAX_SUB_AUTHORITIES) throw new SidError(`${domain} cannot take another sub-authority`);
  return `${normalizeSid(domain)}-${rid}`;
}

function parseSid(text: string): { authority: bigint; subAuthorities: number[] } {
  const match = /^[sS]-1-(0x[0-9a-fA-F]{12}|\d{1,10})((?:-\d{1,10}){0,15})$/.exec(text.trim());
  if (!match) throw new SidError(`"${text}" is not a SID (S-1-<authority>-<sub-authorities>)`);
  const authority = BigInt(match[1]!);
  if (authority >= 2n ** 48n) throw new SidError(`"${text}": identifier authority out of range`);
  const subAuthorities = match[2] === '' ? [] : match[2]!.slice(1).split('-').map(Number);
  if (subAuthorities.some((v) => v > 0xffffffff)) throw new SidError(`"${text}": sub-authority out of range`);
  return { authority, subAuthorities };
}
