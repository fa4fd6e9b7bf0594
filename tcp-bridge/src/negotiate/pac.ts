/**
 * The Privilege Attribute Certificate of an Active Directory Kerberos ticket (MS-PAC): who the user is and which
 * groups the domain controller put them in, nested groups already expanded by the KDC. The bridge gets the PAC from
 * MIT's GSSAPI after accepting a ticket (gss_get_name_attribute on the peer name: `urn:mspac:logon-info` for the
 * KERB_VALIDATION_INFO buffer decoded here, `urn:mspac:` for the whole PAC, `urn:mspac:upn-dns-info`):
 * gssapi/kerberos.ts reads the first (pacSids); test/support/negotiate/gss-pac.ts reads them all for the tests.
 *
 * No maintained npm package decodes a PAC (nor MS-RPCE NDR); this module hand-decodes only what the bridge needs:
 * - `parsePac`: the PACTYPE container (MS-PAC 2.3, 2.4): buffer types and their bytes;
 * - `decodeLogonInfo`: the PAC_LOGON_INFO buffer (MS-PAC 2.5), a KERB_VALIDATION_INFO in NDR type serialization
 *   version 1 (MS-RPCE 2.2.6: common and private headers, then the referent of a unique pointer), read with pac-ndr.ts;
 * - `decodeUpnDnsInfo`: UPN_DNS_INFO (MS-PAC 2.10), the UPN and DNS domain name, and with the S flag the SAM name and
 *   SID;
 * - `pacIdentity`: the user's SID, primary group, every group SID (GroupIds relative to LogonDomainId, ExtraSids,
 *   ResourceGroupIds relative to ResourceGroupDomainSid) and the logon domain.
 *
 * Decisions:
 * - Trust: this module checks no signature. MIT's krb5 verifies the PAC's server checksum with the service key (and
 *   that the PAC names the ticket's client at its authtime) when the ticket is accepted; a PAC that does not verify
 *   is hidden by the library (gss_get_name_attribute answers GSS_S_UNAVAILABLE), and `authenticated` is true for one
 *   that does. The caller must use PAC groups only when `authenticated` was true, and treat "no PAC" as "no groups"
 *   (fail closed). The KDC checksum (privsvr) is not checked by MIT for a service (it needs the krbtgt key): anyone
 *   holding the service's keytab can forge a PAC for that service, as with any Kerberos service.
 * - Every length, count and pointer is bounds-checked against the buffer; a count above `MAX_ENTRIES` in pac-ndr.ts
 *   (far beyond AD's ~1015 groups in a token) or a structure that does not fit is a PacError, never a partial answer.
 * - NDR's deferred pointers are read in the order MS-RPCE lays them out (the pointed-to data of a structure's
 *   embedded pointers follows the structure, in field order; an array of structures with pointers carries all
 *   elements first, then each element's pointee). A non-null pointer whose data is missing, or a conformant array
 *   whose maximum count disagrees with the count field, is refused.
 * - Group SIDs are those whose attributes have SE_GROUP_ENABLED; ExtraSids count only with LOGON_EXTRA_SIDS in
 *   UserFlags and resource groups only with LOGON_RESOURCE_GROUPS, as Windows builds a token. Disabled groups (deny
 *   only) are returned apart, so they never grant a role.
 */
import { dataView, NdrReader, PacError } from './pac-ndr.ts';
import { readSid } from './sid.ts';

export { PacError };

/** PAC_INFO_BUFFER ulType values (MS-PAC 2.4). */
export const PacBufferType = {
  LogonInfo: 1,
  CredentialsInfo: 2,
  ServerChecksum: 6,
  PrivsvrChecksum: 7,
  ClientInfo: 10,
  ConstrainedDelegation: 11,
  UpnDnsInfo: 12,
  ClientClaims: 13,
  DeviceInfo: 14,
  DeviceClaims: 15,
  TicketChecksum: 16,
  Attributes: 17,
  Requestor: 18,
  FullChecksum: 19,
} as const;

/** KERB_VALIDATION_INFO UserFlags bits (MS-PAC 2.5, MS-NRPC 2.2.1.4.11). */
export const UserFlag = { Guest: 0x01, ExtraSids: 0x20, ResourceGroups: 0x200 } as const;

/** SID attribute bits (MS-PAC 2.2.1, MS-DTYP 2.4.4.1 SE_GROUP_*). */
const SidAttribute = { Mandatory: 0x1, EnabledByDefault: 0x2, Enabled: 0x4, Owner: 0x8, Resource: 0x20000000 } as const;

export interface PacBuffer {
  type: number;
  data: Uint8Array;
}

export interface GroupMembership {
  relativeId: number;
  attributes: number;
}

export interface SidAndAttributes {
  sid: string;
  attributes: number;
}

/** The fields of KERB_VALIDATION_INFO the bridge reads (times and the session key fields are skipped). */
export interface KerbValidationInfo {
  /** sAMAccountName. */
  effectiveName: string;
  fullName: string;
  logonCount: number;
  badPasswordCount: number;
  userId: number;
  primaryGroupId: number;
  groupIds: GroupMembership[];
  userFlags: number;
  /** NetBIOS name of the DC that issued the PAC. */
  logonServer: string;
  /** NetBIOS name of the user's domain. */
  logonDomainName: string;
  logonDomainId: string;
  userAccountControl: number;
  extraSids: SidAndAttributes[];
  resourceGroupDomainSid: string | undefined;
  resourceGroupIds: GroupMembership[];
}

export interface UpnDnsInfo {
  upn: string;
  dnsDomainName: string;
  /** Flag U: the account has no UPN attribute; `upn` was built from sAMAccountName@dnsDomainName. */
  upnConstructed: boolean;
  /** With flag S (Windows Server 2022 / Samba 4.15 and later). */
  samName?: string;
  sid?: string;
}

/** What the roles need from a PAC. */
export interface PacIdentity {
  /** `DOMAIN\user` with the logon domain's NetBIOS name (as NTLM names a domain account). */
  account: string;
  userName: string;
  /** NetBIOS name of the user's domain. */
  logonDomain: string;
  logonDomainSid: string;
  userSid: string;
  primaryGroupSid: string;
  /** Every enabled group SID, primary group included, nested groups included (the KDC expands them), unique. */
  groupSids: string[];
  /** Groups present but not enabled (deny-only): never to grant anything. */
  disabledGroupSids: string[];
}

// ---- the PAC container ----

/** The PACTYPE's buffers (MS-PAC 2.3). Throws PacError. */
export function parsePac(bytes: Uint8Array): PacBuffer[] {
  if (bytes.length < 8) throw new PacError('PAC: shorter than its header');
  const view = dataView(bytes);
  const count = view.getUint32(0, true);
  const version = view.getUint32(4, true);
  if (version !== 0) throw new PacError(`PAC: version ${version}, expected 0`);
  if (count === 0 || count > 64 || 8 + 16 * count > bytes.length)
    throw new PacError(`PAC: ${count} buffers do not fit`);
  const buffers: PacBuffer[] = [];
  for (let i = 0; i < count; i++) {
    const at = 8 + 16 * i;
    const type = view.getUint32(at, true);
    const size = view.getUint32(at + 4, true);
    const offset = view.getBigUint64(at + 8, true);
    if (offset % 8n !== 0n || offset + BigInt(size) > BigInt(bytes.length) || offset < BigInt(8 + 16 * count)) {
      throw new PacError(`PAC: buffer ${i} (type ${type}) lies outside the PAC`);
    }
    buffers.push({ type, data: bytes.subarray(Number(offset), Number(offset) + size) });
  }
  return buffers;
}

/** The one buffer of `type` in a PAC's buffers; undefined when absent, PacError when repeated. */
export function pacBuffer(buffers: readonly PacBuffer[], type: number): Uint8Array | undefined {
  const found = buffers.filter((b) => b.type === type);
  if (found.length > 1) throw new PacError(`PAC: buffer type ${type} appears ${found.length} times`);
  return found[0]?.data;
}

/** The KERB_VALIDATION_INFO of a PAC_LOGON_INFO buffer (MS-PAC 2.5). Throws PacError. */
export function decodeLogonInfo(bytes: Uint8Array): KerbValidationInfo {
  if (bytes.length < 20) throw new PacError('logon info: shorter than its headers');
  const view = dataView(bytes);
  // Common type header: version 1, little-endian (0x10), header length 8, filler 0xcccccccc.
  if (bytes[0] !== 1 || bytes[1] !== 0x10 || view.getUint16(2, true) !== 8)
    throw new PacError('logon info: not an NDR type serialization v1 little-endian stream');
  // Private header: the length of the serialized object (a multiple of 8), filler.
  const objectLength = view.getUint32(8, true);
  if (objectLength % 8 !== 0 || 16 + objectLength > bytes.length)
    throw new PacError(`logon info: object length ${objectLength} does not fit ${bytes.length} bytes`);
  const r = new NdrReader(bytes, 16, 16 + objectLength);
  if (r.pointer() === 0) throw new PacError('logon info: NULL top-level pointer');

  r.skip(6 * 8); // LogonTime, LogoffTime, KickOffTime, PasswordLastSet, PasswordCanChange, PasswordMustChange (FILETIME)
  const effectiveName = r.unicodeStringHeader();
  const fullName = r.unicodeStringHeader();
  const logonScript = r.unicodeStringHeader();
  const profilePath = r.unicodeStringHeader();
  const homeDirectory = r.unicodeStringHeader();
  const homeDirectoryDrive = r.unicodeStringHeader();
  const logonCount = r.u16();
  const badPasswordCount = r.u16();
  const userId = r.u32();
  const primaryGroupId = r.u32();
  const groupCount = r.count(r.u32(), 'GroupIds', 8);
  const groupIdsPointer = r.pointer();
  const userFlags = r.u32();
  r.skip(16); // UserSessionKey
  const logonServer = r.unicodeStringHeader();
  const logonDomainName = r.unicodeStringHeader();
  const logonDomainIdPointer = r.pointer();
  r.skip(8); // Reserved1
  const userAccountControl = r.u32();
  r.u32(); // SubAuthStatus
  r.skip(16); // LastSuccessfulILogon, LastFailedILogon
  r.u32(); // FailedILogonCount
  r.u32(); // Reserved3
  const sidCount = r.count(r.u32(), 'ExtraSids', 8);
  const extraSidsPointer = r.pointer();
  const resourceDomainPointer = r.pointer();
  const resourceGroupCount = r.count(r.u32(), 'ResourceGroupIds', 8);
  const resourceGroupIdsPointer = r.pointer();

  // Deferred data, in field order.
  const info: KerbValidationInfo = {
    effectiveName: r.string(effectiveName, 'EffectiveName'),
    fullName: r.string(fullName, 'FullName'),
    logonCount,
    badPasswordCount,
    userId,
    primaryGroupId,
    groupIds: [],
    userFlags,
    logonServer: '',
    logonDomainName: '',
    logonDomainId: '',
    userAccountControl,
    extraSids: [],
    resourceGroupDomainSid: undefined,
    resourceGroupIds: [],
  };
  r.string(logonScript, 'LogonScript');
  r.string(profilePath, 'ProfilePath');
  r.string(homeDirectory, 'HomeDirectory');
  r.string(homeDirectoryDrive, 'HomeDirectoryDrive');
  info.groupIds = groupMemberships(r, groupIdsPointer, groupCount, 'GroupIds');
  info.logonServer = r.string(logonServer, 'LogonServer');
  info.logonDomainName = r.string(logonDomainName, 'LogonDomainName');
  if (logonDomainIdPointer === 0) throw new PacError('logon info: no LogonDomainId');
  info.logonDomainId = r.sid('LogonDomainId');
  if (extraSidsPointer === 0) {
    if (sidCount !== 0) throw new PacError('logon info: ExtraSids counted but absent');
  } else {
    r.conformance(sidCount, 'ExtraSids');
    const entries: Array<{ pointer: number; attributes: number }> = [];
    for (let i = 0; i < sidCount; i++) entries.push({ pointer: r.pointer(), attributes: r.u32() });
    for (const [i, entry] of entries.entries()) {
      if (entry.pointer === 0) throw new PacError(`logon info: ExtraSids[${i}] is NULL`);
      info.extraSids.push({ sid: r.sid(`ExtraSids[${i}]`), attributes: entry.attributes });
    }
  }
  if (resourceDomainPointer !== 0) info.resourceGroupDomainSid = r.sid('ResourceGroupDomainSid');
  info.resourceGroupIds = groupMemberships(r, resourceGroupIdsPointer, resourceGroupCount, 'ResourceGroupIds');
  if (info.resourceGroupIds.length > 0 && info.resourceGroupDomainSid === undefined)
    throw new PacError('logon info: resource groups without ResourceGroupDomainSid');
  return info;
}

function groupMemberships(r: NdrReader, pointer: number, count: number, what: string): GroupMembership[] {
  if (pointer === 0) {
    if (count !== 0) throw new PacError(`logon info: ${what} counted but absent`);
    return [];
  }
  r.conformance(count, what);
  const out: GroupMembership[] = [];
  for (let i = 0; i < count; i++) out.push({ relativeId: r.u32(), attributes: r.u32() });
  return out;
}

// ---- UPN_DNS_INFO ----

/** UPN_DNS_INFO (MS-PAC 2.10). Throws PacError. */
export function decodeUpnDnsInfo(bytes: Uint8Array): UpnDnsInfo {
  if (bytes.length < 12) throw new PacError('UPN_DNS_INFO: truncated');
  const view = dataView(bytes);
  const field = (at: number, what: string): string => {
    const length = view.getUint16(at, true);
    const offset = view.getUint16(at + 2, true);
    if (length % 2 !== 0 || offset + length > bytes.length)
      throw new PacError(`UPN_DNS_INFO: ${what} lies outside the buffer`);
    return new TextDecoder('utf-16le').decode(bytes.subarray(offset, offset + length));
  };
  const flags = view.getUint32(8, true);
  const info: UpnDnsInfo = {
    upn: field(0, 'Upn'),
    dnsDomainName: field(4, 'DnsDomainName'),
    upnConstructed: (flags & 1) !== 0,
  };
  if ((flags & 2) !== 0) {
    if (bytes.length < 20) throw new PacError('UPN_DNS_INFO: S flag without SamName and Sid');
    info.samName = field(12, 'SamName');
    const length = view.getUint16(16, true);
    const offset = view.getUint16(18, true);
    if (offset + length > bytes.length) throw new PacError('UPN_DNS_INFO: Sid lies outside the buffer');
    try {
      const { sid, length: used } = readSid(bytes.subarray(offset, offset + length));
      if (used !== length) throw new PacError('UPN_DNS_INFO: Sid length disagrees');
      info.sid = sid;
    } catch (error) {
      throw error instanceof PacError ? error : new PacError(`UPN_DNS_INFO: ${(error as Error).message}`);
    }
  }
  return info;
}

// ---- what the roles need ----

/** The user's SID, groups and domain from a decoded KERB_VALIDATION_INFO. Throws PacError. */
export function pacIdentity(info: KerbValidationInfo): PacIdentity {
  const enabled = new Set<string>();
  const disabled = new Set<string>();
  const add = (sid: string, attributes: number): void => {
    if ((attributes & SidAttribute.Enabled) !== 0) enabled.add(sid);
    else disabled.add(sid);
  };
  const extra = (info.userFlags & UserFlag.ExtraSids) !== 0 ? info.extraSids : [];
  // MS-PAC 2.5: a UserId of 0 means the user's SID is the first ExtraSid.
  let userSid: string;
  let groupsFromExtra = extra;
  if (info.userId === 0) {
    if (extra.length === 0) throw new PacError('logon info: UserId 0 and no ExtraSids');
    userSid = extra[0]!.sid;
    groupsFromExtra = extra.slice(1);
  } else {
    userSid = `${info.logonDomainId}-${info.userId}`;
  }
  const primaryGroupSid = `${info.logonDomainId}-${info.primaryGroupId}`;
  for (const g of info.groupIds) add(`${info.logonDomainId}-${g.relativeId}`, g.attributes);
  for (const s of groupsFromExtra) add(s.sid, s.attributes);
  if ((info.userFlags & UserFlag.ResourceGroups) !== 0 && info.resourceGroupDomainSid !== undefined) {
    for (const g of info.resourceGroupIds) add(`${info.resourceGroupDomainSid}-${g.relativeId}`, g.attributes);
  }
  // The primary group is a member in Windows' token whether or not GroupIds repeats it.
  if (!disabled.has(primaryGroupSid)) enabled.add(primaryGroupSid);
  for (const sid of enabled) disabled.delete(sid);
  if (info.effectiveName === '' || info.logonDomainName === '')
    throw new PacError('logon info: no account or domain name');
  return {
    account: `${info.logonDomainName.toUpperCase()}\\${info.effectiveName}`,
    userName: info.effectiveName,
    logonDomain: info.logonDomainName,
    logonDomainSid: info.logonDomainId,
    userSid,
    primaryGroupSid,
    groupSids: [...enabled],
    disabledGroupSids: [...disabled],
  };
}

/** parsePac + decodeLogonInfo + pacIdentity over a whole PAC (`urn:mspac:`). Throws PacError when there is no logon info. */
export function identityFromPac(pac: Uint8Array): PacIdentity {
  const logonInfo = pacBuffer(parsePac(pac), PacBufferType.LogonInfo);
  if (logonInfo === undefined) throw new PacError('PAC: no logon info buffer');
  return pacIdentity(decodeLogonInfo(logonInfo));
}
