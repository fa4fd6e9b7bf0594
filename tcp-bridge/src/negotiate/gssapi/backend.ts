/**
 * The system GSSAPI (MIT `libgssapi_krb5.so.2`) through koffi: the second `SecurityBackend`. It accepts Kerberos for
 * domain users with a keytab (KRB5_KTNAME) holding `host/<BRIDGE_DNS_IDENTITY>`, and, with BRIDGE_NTLM_BACKEND=gssapi,
 * NTLM through gss-ntlmssp (the MIT mechanism plugin, Debian package gss-ntlmssp) over the BRIDGE_NTLM_USERS file.
 * SPNEGO stays in spnego.ts and NNS framing in stream.ts: this backend sees the raw mechanism tokens (the RFC 2743
 * framed AP-REQ, or the NTLM messages), and protects the data frames with gss_wrap / gss_unwrap.
 *
 * Plugging it in (once, at start; it throws ConfigError when it cannot accept anything):
 *
 *   const gssapi = new GssapiBackend({ keytab: config.keytab, ntlmUsers: config.ntlmUsersFile, dnsIdentity });
 *   backends.push(gssapi);            // Kerberos when keytab is given, NTLM when ntlmUsers is
 *   ... on shutdown: gssapi.close();  // releases the acceptor credentials
 *
 * or `gssapiBackendFromEnv(process.env)` (KRB5_KTNAME, BRIDGE_NTLM_BACKEND, BRIDGE_NTLM_USERS, BRIDGE_DNS_IDENTITY).
 *
 * Decisions, Kerberos:
 * - The acceptor credential is acquired once, at start, for the host-based name `host@<dnsIdentity>` from the keytab
 *   named explicitly in a credential store (gss_acquire_cred_from), so the library accepts tickets for that service
 *   only (any realm the keytab holds it in) and the process environment cannot point it at another keytab. The
 *   keytab must be a file readable by us and by nobody else (as BRIDGE_NTLM_USERS): it is password-equivalent. A
 *   keytab without a key for the name is refused at start (MIT checks that when acquiring). The key itself is read
 *   at each accept, so a rotated keytab is picked up without a restart.
 * - What Kerberos enforces, the library does: ticket and authenticator decryption, clock skew (krb5.conf
 *   `clockskew`, 300 s by default), ticket times, the replay cache (refused at start when switched off through
 *   KRB5RCACHETYPE=none), the wrap tokens' checksums, direction flag and, when the client asked for them, sequence
 *   and replay detection. On top of that the context requires:
 *   - mutual authentication (GSS_C_MUTUAL_FLAG), which .NET's NegotiateStream always requests unless
 *     ProtectionLevel.None: the client thus verifies the bridge through the AP-REP (`requireMutualAuth: false`
 *     lifts this);
 *   - no anonymous principal (GSS_C_ANON_FLAG), a Kerberos mechanism as the result, a peer name;
 *   - strict ordering of what the client protects. .NET asks for sequence detection only under Sign (EncryptAndSign
 *     sets Confidentiality alone), so MIT would otherwise let a replayed or reordered frame of the same session
 *     through. Every RFC 4121 wrap token carries SND_SEQ in a header the library authenticates; after a successful
 *     gss_unwrap the next data frame must carry exactly the previous + 1 (the first data frame sets the start; see
 *     checkSequence). Older RFC 1964 tokens (RC4-HMAC, DES keys) encrypt their sequence number: for those only the
 *     library's own detection applies, when the client asked for it.
 *   The protection level is the context's flags, as .NET reads them: confidentiality = GSS_C_CONF_FLAG (MIT and
 *   Windows initiators set it whenever they can seal). Under EncryptAndSign every incoming frame must be sealed
 *   (conf_state); under Sign signed-only frames are accepted too. Outgoing frames are sealed when the context has
 *   confidentiality, as a .NET server on Linux does.
 * - Wrap tokens: MIT writes RRC 0; gss_unwrap takes any RRC, so Windows' rotated tokens (RRC 28 sealed) are read as
 *   they are. The largest frame .NET sends (63 KiB of plaintext) wraps to 64 572 bytes, within the 64 KiB NNS
 *   accepts; `wrapOverhead` is gss_wrap_size_limit's figure, but at least 72 bytes (see computeOverhead).
 *
 * Decisions, NTLM through gss-ntlmssp (measured against Debian's 1.2.0; see the negotiate README for what it
 * enforces and what it does not):
 * - The acceptor credential is acquired once, at start, for `host@<dnsIdentity>` with the users file in the
 *   credential store under gss-ntlmssp's key `ntlmssp_keyfile` (a server credential carries it into every accept).
 *   1.2.0 has no `ntlm_user_file` key (it is ignored, and the library then falls back to NTLM_USER_FILE from the
 *   environment, then to winbind): the store's key keeps the accounts to this file whatever the environment says.
 *   The name is required: 1.2.0 dereferences a null name when a credential store comes without one (a segfault).
 * - The file is BRIDGE_NTLM_USERS, checked as ntlm.ts checks it (refused when group/others can read it, malformed),
 *   and also refused when it holds what gss-ntlmssp reads differently: `{NT}` hashes (it takes them for passwords), a
 *   password with `:` (it reads such a line as smbpasswd format, or skips it), a line over 1000 bytes (it reads
 *   lines through a 1 KiB buffer). The library reads the file again at each logon.
 * - The library decides on the proof (NTLMv2 response against the file's password), the MIC when the client announces
 *   one, the session keys, the signatures and RC4 sealing with sequence numbers. It does not check the rest of the
 *   notes' rules; a gate in TypeScript does, on the messages as they pass, before the library sees them and with the
 *   same functions as ntlm.ts: the NEGOTIATE's flags, the AUTHENTICATE's form, anonymous and NTLMv1/LM refused, the
 *   challenge's age (60 s), MIC required (MsvAvFlags: the proof covers it, and the library then checks the MIC),
 *   the client's timestamp equal to the CHALLENGE's, MsvAvTargetName among our SPNs, channel bindings absent or zero,
 *   LmChallengeResponse all zero (as a domain member gss-ntlmssp falls back to LMv2, whose proof covers neither the
 *   MIC flag nor the timestamp), a 16-byte EncryptedRandomSessionKey (1.2.0, master too, copies 16 bytes from it
 *   whatever its length once the proof is right: an empty one is a NULL dereference that crashed the process),
 *   throttling per claimed user and per source address; and the CHALLENGE the library wrote must grant extended
 *   session security, 128-bit keys, key exchange, signing (and sealing under EncryptAndSign), whatever
 *   LM_COMPAT_LEVEL says. What stays the library's: its comparisons are memcmp (not constant-time), an unknown user
 *   costs less than a wrong password, and a context expires 36 hours after logon (gss_wrap then fails and the
 *   connection is dropped).
 * - A 32-byte NEGOTIATE (no Version field) is refused (`ntlm.negotiate-no-version`): 1.2.0 cannot read it, and
 *   padding it would break the client's MIC, which covers the NEGOTIATE as sent.
 * - Peer names: gss_display_name gives `DOMAIN\user` as the client typed it, with a trailing NUL. The NUL is dropped and
 *   the name mapped to the users file's line, as ntlm.ts names it (`DOMAIN\user`, the CHALLENGE's NetBIOS computer
 *   name for an empty domain); a name the file read at start does not hold (a line added since) is taken as sent,
 *   normalized.
 * - mechListMIC: gss_get_mic / gss_verify_mic with sequence number 0, then the RC4 handle of that direction is reset
 *   through gss_set_sec_context_option (gss-ntlmssp's reset-crypto option, as MIT's SPNEGO does it), so the first
 *   data frame carries sequence number 1 and the keystream starts afresh (MS-SPNG 3.3.5.1).
 * - Data frames: gss_wrap always seals; signed-only frames in MS-NLMP's form (signature ‖ plaintext, what Windows
 *   SSPI sends under ProtectionLevel.Sign) are gss_get_mic / gss_verify_mic over the plaintext. Without SEAL the
 *   first frame tells which form the client uses, as in ntlm.ts: the context is exported and imported twice
 *   (gss_export_sec_context) to try both forms on copies, since a failed try moves the library's RC4 handle and
 *   sequence number; the token holding the keys is zeroed before it is freed. The sequence number in a frame's
 *   signature is compared with ours before the library is asked, so a frame out of order is told from a forged one.
 *
 * Both mechanisms:
 * - gss_accept_sec_context may read the keytab or the users file and write the replay cache: it runs on koffi's
 *   worker threads (`.async`), never on the event loop. gss_wrap / gss_unwrap / gss_get_mic / gss_verify_mic are
 *   computations on keys in memory: synchronous, so the frames of a connection stay in order. A context disposed
 *   while its step runs is released when the step returns (native memory is never freed under a running call).
 * - Every name, buffer, context and credential the library hands out is released (gss_release_*,
 *   gss_delete_sec_context); the native memory this module allocates for arguments is freed (and zeroed) after each
 *   call. A context its owner forgets to dispose is deleted when it is garbage-collected (FinalizationRegistry).
 * - A refusal is a NegotiateError (the client sees logon denied); its reason is one of `gssapi.replay`,
 *   `gssapi.clock-skew`, `gssapi.ticket-expired`, `gssapi.wrong-service`, `gssapi.wrong-key`, `gssapi.not-mutual`,
 *   `gssapi.anonymous`, `gssapi.bad-proof` and `gssapi.bad-mic` (NTLM), the gate's `ntlm.*` reasons (as ntlm.ts's),
 *   `gssapi.refused` (anything else), with the library's own message as detail for the log.
 *
 * Not done here: delegation (delegated credentials are not requested and are released by the library), channel
 * bindings (raw TCP has none), NTLM accounts from winbind (the credential store keeps gss-ntlmssp to the file).
 */

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import { resolve } from 'node:path';
import { ConfigError, type Environment } from '#idb';
import { admitAuthenticate, admitNegotiate, AvId, checkNtlmV2Pairs, LogonThrottle, NtlmAccounts, NtlmFlag, parseChallenge, REQUIRED_NTLM_FLAGS } from '../ntlm/index.ts';
import { checkSecretFile } from '../secret-file.ts';
import {
  IntegrityError,
  NegotiateError,
  normalizePeerName,
  OID,
  type AcceptorInfo,
  type MechanismContext,
  type MicOptions,
  type SecurityBackend,
  type StepResult,
} from '../security-context.ts';

// ---- GSSAPI constants (RFC 2744, MIT gssapi.h) ----

export const GssFlag = {
  Deleg: 1,
  Mutual: 2,
  Replay: 4,
  Sequence: 8,
  Conf: 16,
  Integ: 32,
  Anon: 64,
  ProtReady: 128,
  Trans: 256,
} as const;

const GSS_C_ACCEPT = 2;
const GSS_C_GSS_CODE = 1;
const GSS_C_MECH_CODE = 2;
const GSS_S_CONTINUE_NEEDED = 1;
const GSS_S_DUPLICATE_TOKEN = 2;
const GSS_S_OLD_TOKEN = 4;
const GSS_S_UNSEQ_TOKEN = 8;
const GSS_S_GAP_TOKEN = 16;
const SEQUENCE_PROBLEMS = GSS_S_DUPLICATE_TOKEN | GSS_S_OLD_TOKEN | GSS_S_UNSEQ_TOKEN | GSS_S_GAP_TOKEN;
/** The calling and routine error fields of a major status: zero means success (maybe with supplementary bits). */
const isError = (major: number): boolean => (major & 0xffff0000) !== 0;

/** DER contents (no tag, no length) of the OIDs the library is given. */
const OID_BYTES = {
  hostbasedService: [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x01, 0x04], // 1.2.840.113554.1.2.1.4
  kerberos: [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02], // 1.2.840.113554.1.2.2
  kerberosMicrosoft: [0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02], // 1.2.840.48018.1.2.2
  ntlm: [0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a], // 1.3.6.1.4.1.311.2.2.10
  /** gss-ntlmssp's GSS_NTLMSSP_RESET_CRYPTO_OID (1.3.6.1.4.1.7165.655.1.3), for gss_set_sec_context_option. */
  ntlmResetCrypto: [0x2b, 0x06, 0x01, 0x04, 0x01, 0xb7, 0x7d, 0x85, 0x0f, 0x01, 0x03],
} as const;

/** gss-ntlmssp's minor codes (errno values) behind the NTLM refusals of gss_accept_sec_context. */
const NTLM_MINOR = { noAccount: 2 /* ENOENT */, badMic: 13 /* EACCES */, badProof: 22 /* EINVAL */ } as const;

/** krb5 com_err codes (krb5_err.et: ERROR_TABLE_BASE_krb5 + index) behind the refusal reasons. */
const KRB5_BASE = -1765328384;
const KRB5_REASONS = new Map<number, string>([
  [KRB5_BASE + 31, 'gssapi.wrong-key'], // KRB5KRB_AP_ERR_BAD_INTEGRITY
  [KRB5_BASE + 32, 'gssapi.ticket-expired'], // KRB5KRB_AP_ERR_TKT_EXPIRED
  [KRB5_BASE + 33, 'gssapi.ticket-expired'], // KRB5KRB_AP_ERR_TKT_NYV
  [KRB5_BASE + 34, 'gssapi.replay'], // KRB5KRB_AP_ERR_REPEAT
  [KRB5_BASE + 35, 'gssapi.wrong-service'], // KRB5KRB_AP_ERR_NOT_US
  [KRB5_BASE + 36, 'gssapi.wrong-service'], // KRB5KRB_AP_ERR_BADMATCH
  [KRB5_BASE + 37, 'gssapi.clock-skew'], // KRB5KRB_AP_ERR_SKEW
  [KRB5_BASE + 41, 'gssapi.wrong-key'], // KRB5KRB_AP_ERR_MODIFIED
  [KRB5_BASE + 44, 'gssapi.wrong-key'], // KRB5KRB_AP_ERR_BADKEYVER
  [KRB5_BASE + 45, 'gssapi.wrong-key'], // KRB5KRB_AP_ERR_NOKEY
]);

// ---- the library through koffi ----

type Ptr = bigint;
type NativeFn = ((...args: unknown[]) => number) & { async: (...args: unknown[]) => void };

interface KoffiModule {
  load(path: string): { func(definition: string): NativeFn };
  alloc(type: string, length: number): Ptr;
  free(pointer: Ptr): void;
  view(pointer: Ptr, length: number): ArrayBuffer;
  sizeof(type: string): number;
  version: string;
}

/** The GSSAPI functions this module calls; every pointer is a koffi BigInt (or null for NULL). */
interface GssLibrary {
  koffi: KoffiModule;
  importName: NativeFn;
  acquireCredFrom: NativeFn;
  acceptSecContext: NativeFn;
  displayName: NativeFn;
  displayStatus: NativeFn;
  wrap: NativeFn;
  unwrap: NativeFn;
  getMic: NativeFn;
  verifyMic: NativeFn;
  wrapSizeLimit: NativeFn;
  setSecContextOption: NativeFn;
  exportSecContext: NativeFn;
  importSecContext: NativeFn;
  releaseBuffer: NativeFn;
  releaseName: NativeFn;
  releaseCred: NativeFn;
  deleteSecContext: NativeFn;
  /** OID descriptors (and sets of them) in native memory for the life of the process. */
  oids: { hostbasedService: Ptr; kerberosSet: Ptr; ntlmSet: Ptr; ntlmResetCrypto: Ptr };
}

const libraries = new Map<string, GssLibrary>();

/**
 * Loads koffi and the GSSAPI library (once per path). koffi is loaded here, not at import, so that importing this
 * module costs nothing where Kerberos is not configured. Throws ConfigError when either cannot be loaded.
 */
function loadGssapi(path = 'libgssapi_krb5.so.2'): GssLibrary {
  const cached = libraries.get(path);
  if (cached) return cached;
  let koffi: KoffiModule;
  try {
    koffi = createRequire(import.meta.url)('koffi') as KoffiModule;
  } catch (error) {
    throw new ConfigError(`The GSSAPI backend (KRB5_KTNAME, BRIDGE_NTLM_BACKEND=gssapi) needs the koffi package for this platform: ${error instanceof Error ? error.message : String(error)}`);
  }
  // The structures below are laid out by hand for LP64 little-endian ABIs (x86-64, arm64, riscv64, loong64).
  if (koffi.sizeof('void *') !== 8 || koffi.sizeof('size_t') !== 8 || endianness() !== 'LE') {
    throw new ConfigError(`The GSSAPI backend needs a 64-bit little-endian platform, not ${process.arch}`);
  }
  let lib: ReturnType<KoffiModule['load']>;
  try {
    lib = koffi.load(path);
  } catch (error) {
    throw new ConfigError(`The GSSAPI backend (KRB5_KTNAME, BRIDGE_NTLM_BACKEND=gssapi) needs MIT GSSAPI (${path}, Debian package libgssapi-krb5-2): ${error instanceof Error ? error.message : String(error)}`);
  }
  const f = (definition: string): NativeFn => lib.func(definition);
  const library: GssLibrary = {
    koffi,
    importName: f('uint32 gss_import_name(void *minor, void *input_name_buffer, void *input_name_type, void *output_name)'),
    acquireCredFrom: f(
      'uint32 gss_acquire_cred_from(void *minor, void *desired_name, uint32 time_req, void *desired_mechs, int cred_usage, void *cred_store, void *output_cred, void *actual_mechs, void *time_rec)',
    ),
    acceptSecContext: f(
      'uint32 gss_accept_sec_context(void *minor, void *context_handle, void *acceptor_cred, void *input_token, void *channel_bindings, void *src_name, void *mech_type, void *output_token, void *ret_flags, void *time_rec, void *delegated_cred)',
    ),
    displayName: f('uint32 gss_display_name(void *minor, void *name, void *output_name_buffer, void *output_name_type)'),
    displayStatus: f('uint32 gss_display_status(void *minor, uint32 status_value, int status_type, void *mech_type, void *message_context, void *status_string)'),
    wrap: f('uint32 gss_wrap(void *minor, void *context, int conf_req_flag, uint32 qop_req, void *input_message, void *conf_state, void *output_message)'),
    unwrap: f('uint32 gss_unwrap(void *minor, void *context, void *input_message, void *output_message, void *conf_state, void *qop_state)'),
    getMic: f('uint32 gss_get_mic(void *minor, void *context, uint32 qop_req, void *message, void *token)'),
    verifyMic: f('uint32 gss_verify_mic(void *minor, void *context, void *message, void *token, void *qop_state)'),
    wrapSizeLimit: f('uint32 gss_wrap_size_limit(void *minor, void *context, int conf_req_flag, uint32 qop_req, uint32 req_output_size, void *max_input_size)'),
    setSecContextOption: f('uint32 gss_set_sec_context_option(void *minor, void *context, void *desired_object, void *value)'),
    exportSecContext: f('uint32 gss_export_sec_context(void *minor, void *context, void *interprocess_token)'),
    importSecContext: f('uint32 gss_import_sec_context(void *minor, void *interprocess_token, void *context)'),
    releaseBuffer: f('uint32 gss_release_buffer(void *minor, void *buffer)'),
    releaseName: f('uint32 gss_release_name(void *minor, void *name)'),
    releaseCred: f('uint32 gss_release_cred(void *minor, void *cred)'),
    deleteSecContext: f('uint32 gss_delete_sec_context(void *minor, void *context, void *output_token)'),
    oids: { hostbasedService: 0n, kerberosSet: 0n, ntlmSet: 0n, ntlmResetCrypto: 0n },
  };
  // Never freed: the library keeps pointers to OIDs it is given in names and credentials.
  library.oids.hostbasedService = permanentOids(koffi, [OID_BYTES.hostbasedService]);
  // Both spellings of Kerberos: MIT's krb5 mechanism answers to each, but a credential acquired for one does not
  // accept a token whose header carries the other (Windows may use Microsoft's).
  library.oids.kerberosSet = permanentOidSet(koffi, [OID_BYTES.kerberos, OID_BYTES.kerberosMicrosoft]);
  library.oids.ntlmSet = permanentOidSet(koffi, [OID_BYTES.ntlm]);
  library.oids.ntlmResetCrypto = permanentOids(koffi, [OID_BYTES.ntlmResetCrypto]);
  libraries.set(path, library);
  return library;
}

/** A gss_OID_set_desc { size_t count; gss_OID elements } over permanentOids. */
function permanentOidSet(koffi: KoffiModule, oids: ReadonlyArray<readonly number[]>): Ptr {
  const set = koffi.alloc('uint8', 16);
  const view = new DataView(koffi.view(set, 16));
  view.setBigUint64(0, BigInt(oids.length), true);
  view.setBigUint64(8, permanentOids(koffi, oids), true);
  return set;
}

/** An array of gss_OID_desc { OM_uint32 length; void *elements } with their bytes, allocated for good. */
function permanentOids(koffi: KoffiModule, oids: ReadonlyArray<readonly number[]>): Ptr {
  const descs = koffi.alloc('uint8', 16 * oids.length);
  const view = new DataView(koffi.view(descs, 16 * oids.length));
  oids.forEach((bytes, i) => {
    const elements = koffi.alloc('uint8', bytes.length);
    new Uint8Array(koffi.view(elements, bytes.length)).set(bytes);
    view.setUint32(16 * i, bytes.length, true);
    view.setUint32(16 * i + 4, 0, true);
    view.setBigUint64(16 * i + 8, elements, true);
  });
  return descs;
}

/**
 * A block of native memory for one call's arguments (status words, handles, buffer descriptors) and the bytes they
 * point to. Freed with `free()`; nothing in it survives the call.
 */
class NativeBlock {
  readonly pointer: Ptr;
  readonly view: DataView;
  readonly bytes: Uint8Array;
  private freed = false;

  constructor(
    private readonly koffi: KoffiModule,
    readonly size: number,
  ) {
    this.pointer = koffi.alloc('uint8', size);
    const buffer = koffi.view(this.pointer, size);
    this.view = new DataView(buffer);
    this.bytes = new Uint8Array(buffer);
    this.bytes.fill(0);
  }

  at(offset: number): Ptr {
    return this.pointer + BigInt(offset);
  }

  u32(offset: number): number {
    return this.view.getUint32(offset, true);
  }

  ptr(offset: number): Ptr {
    return this.view.getBigUint64(offset, true);
  }

  setPtr(offset: number, value: Ptr): void {
    this.view.setBigUint64(offset, value, true);
  }

  /** A gss_buffer_desc at `offset` pointing at `data`, copied to `dataOffset` of this block. */
  setBuffer(offset: number, dataOffset: number, data: Uint8Array): void {
    this.bytes.set(data, dataOffset);
    this.view.setBigUint64(offset, BigInt(data.length), true);
    this.view.setBigUint64(offset + 8, data.length === 0 ? 0n : this.at(dataOffset), true);
  }

  free(): void {
    if (this.freed) return;
    this.freed = true;
    this.bytes.fill(0); // tokens and plaintext do not linger in freed memory
    this.koffi.free(this.pointer);
  }
}

/** Copies the gss_buffer_desc at `desc` (filled by the library) out, then releases it. */
function takeBuffer(lib: GssLibrary, block: NativeBlock, descOffset: number, minorOffset: number): Uint8Array {
  const length = Number(block.ptr(descOffset));
  const value = block.ptr(descOffset + 8);
  let out = new Uint8Array(0);
  if (length > 0 && value !== 0n) out = new Uint8Array(lib.koffi.view(value, length)).slice();
  if (value !== 0n) lib.releaseBuffer(block.at(minorOffset), block.at(descOffset));
  return out;
}

/** The library's words for a status (major and minor), for log lines. */
function statusText(lib: GssLibrary, major: number, minor: number): string {
  const parts: string[] = [];
  const block = new NativeBlock(lib.koffi, 48);
  try {
    for (const [code, type] of [
      [major, GSS_C_GSS_CODE],
      [minor, GSS_C_MECH_CODE],
    ] as const) {
      if (code === 0) continue;
      block.view.setUint32(8, 0, true); // message_context
      for (let i = 0; i < 8; i++) {
        const status = lib.displayStatus(block.at(0), code, type, null, block.at(8), block.at(16));
        if (isError(status)) break;
        const text = new TextDecoder().decode(takeBuffer(lib, block, 16, 0)).replace(/\0+$/, '');
        if (text !== '' && text !== 'Success') parts.push(text); // MIT's words for a zero minor code
        if (block.u32(8) === 0) break;
      }
    }
  } finally {
    block.free();
  }
  return parts.length > 0 ? parts.join('; ') : `major 0x${(major >>> 0).toString(16)}, minor ${minor}`;
}

// ---- configuration ----

/** The path of a file keytab (`FILE:/path`, `WRFILE:/path` or `/path`) that is a secret file; ConfigError otherwise. */
export function checkKeytab(keytab: string): string {
  const match = /^(?:(FILE|WRFILE):)?(\/.*)$/.exec(keytab);
  if (!match) throw new ConfigError(`KRB5_KTNAME: "${keytab}" is not a file keytab (FILE:/absolute/path)`);
  const path = match[2]!;
  checkSecretFile(path, 'KRB5_KTNAME', "the service's keys");
  return path;
}

/**
 * BRIDGE_NTLM_USERS for gss-ntlmssp: the checks of NtlmAccounts.load (owner-only mode, `DOMAIN:user:password` lines),
 * and a ConfigError for lines gss-ntlmssp 1.2 reads otherwise than ntlm.ts does: `{NT}` hashes (taken for passwords),
 * passwords with `:` (read as smbpasswd format, or skipped) and lines over 1000 bytes (read through a 1 KiB buffer).
 */
export function loadGssNtlmUsers(path: string): NtlmAccounts {
  const accounts = NtlmAccounts.load(path);
  readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .forEach((line, index) => {
      if (line.trim() === '' || line.startsWith('#')) return;
      const where = `BRIDGE_NTLM_USERS line ${index + 1}`;
      const secret = line.slice(line.indexOf(':', line.indexOf(':') + 1) + 1);
      if (secret.startsWith('{NT}')) {
        throw new ConfigError(`${where}: gss-ntlmssp reads {NT} hashes as passwords; write the password, or keep BRIDGE_NTLM_BACKEND=typescript`);
      }
      if (secret.includes(':')) throw new ConfigError(`${where}: gss-ntlmssp cannot read a password with ":"; keep BRIDGE_NTLM_BACKEND=typescript for it`);
      if (Buffer.byteLength(line) > 1000) throw new ConfigError(`${where}: longer than gss-ntlmssp reads (1000 bytes)`);
    });
  return accounts;
}

export interface GssapiBackendOptions {
  /** KRB5_KTNAME: `FILE:/path` or `/path`, mode 0600. Kerberos is offered when given. */
  keytab?: string;
  /** BRIDGE_NTLM_USERS, mode 0600: NTLM through gss-ntlmssp is offered when given (BRIDGE_NTLM_BACKEND=gssapi). */
  ntlmUsers?: string;
  /** BRIDGE_DNS_IDENTITY: the acceptor is `<service>/<dnsIdentity>` (host/<dns> by default), in any realm of the keytab. */
  dnsIdentity: string;
  /** The SPN's service part. Default `host` (what a WCF client asks for with a DNS identity). */
  service?: string;
  /** Kerberos: refuse clients that do not ask for mutual authentication. Default true. */
  requireMutualAuth?: boolean;
  /** A replay cache name for the credential store (MIT `rcache`, e.g. `dfl:` or `file2:/path`). Default: the library's. */
  replayCache?: string;
  /** The GSSAPI library. Default `libgssapi_krb5.so.2`. */
  library?: string;
  /** NTLM: target names (SPNs) a client may name in MsvAvTargetName. Default `<service>/<dnsIdentity>`. */
  targetNames?: readonly string[];
  /** NTLM: failed logons per claimed user and per source address. Default: ntlm.ts's limits. */
  throttle?: LogonThrottle;
  /** NTLM: how long a CHALLENGE stays answerable. Default 60 s. */
  challengeLifetimeMs?: number;
  /** For tests: the clock. */
  now?: () => number;
}

/** What the NTLM gate of each context needs from its backend. */
interface NtlmGateSettings {
  accounts: NtlmAccounts;
  targetNames: readonly string[];
  throttle: LogonThrottle;
  challengeLifetimeMs: number;
  now: () => number;
}

export class GssapiBackend implements SecurityBackend {
  readonly name = 'gssapi';
  /** Kerberos (both OIDs) when a keytab is given, then NTLM when a users file is. */
  readonly mechanisms: readonly string[];
  /** `service@host` as imported (GSS_C_NT_HOSTBASED_SERVICE). */
  readonly acceptorName: string;
  readonly keytabPath: string | undefined;
  readonly requireMutualAuth: boolean;
  private readonly lib: GssLibrary;
  private kerberosCred: Ptr = 0n;
  private ntlmCred: Ptr = 0n;
  private readonly ntlm: NtlmGateSettings | undefined;
  private open = 0;
  private closing = false;

  constructor(options: GssapiBackendOptions) {
    if (!/^[A-Za-z0-9.-]+$/.test(options.dnsIdentity)) throw new ConfigError(`BRIDGE_DNS_IDENTITY must be a DNS name, not "${options.dnsIdentity}"`);
    if (options.keytab === undefined && options.ntlmUsers === undefined) {
      throw new ConfigError('The GSSAPI backend needs KRB5_KTNAME (Kerberos) and/or BRIDGE_NTLM_USERS with BRIDGE_NTLM_BACKEND=gssapi (NTLM)');
    }
    const service = options.service ?? 'host';
    this.acceptorName = `${service}@${options.dnsIdentity}`;
    this.requireMutualAuth = options.requireMutualAuth ?? true;
    const rcache = options.replayCache ?? process.env.KRB5RCACHENAME;
    if (options.keytab !== undefined) {
      this.keytabPath = checkKeytab(options.keytab);
      if (process.env.KRB5RCACHETYPE === 'none' || (rcache !== undefined && /^none:/i.test(rcache))) {
        throw new ConfigError('Kerberos needs its replay cache: unset KRB5RCACHETYPE=none / KRB5RCACHENAME=none:');
      }
    }
    if (options.ntlmUsers !== undefined) {
      const now = options.now ?? Date.now;
      this.ntlm = {
        accounts: loadGssNtlmUsers(options.ntlmUsers),
        targetNames: options.targetNames ?? [`${service}/${options.dnsIdentity}`],
        throttle: options.throttle ?? new LogonThrottle({ now }),
        challengeLifetimeMs: options.challengeLifetimeMs ?? 60_000,
        now,
      };
    }
    this.lib = loadGssapi(options.library);
    if (this.keytabPath !== undefined) {
      const store: Array<[string, string]> = [['keytab', `FILE:${this.keytabPath}`]];
      if (options.replayCache !== undefined) store.push(['rcache', options.replayCache]);
      this.kerberosCred = this.acquire(this.lib.oids.kerberosSet, store, 'Kerberos', `in ${this.keytabPath}`);
    }
    if (options.ntlmUsers !== undefined) {
      try {
        this.ntlmCred = this.acquire(this.lib.oids.ntlmSet, [['ntlmssp_keyfile', resolve(options.ntlmUsers)]], 'NTLM (gss-ntlmssp)', 'for BRIDGE_NTLM_USERS');
      } catch (error) {
        this.releaseCreds();
        throw error;
      }
    }
    this.mechanisms = [...(this.kerberosCred !== 0n ? [OID.kerberosMicrosoft, OID.kerberos] : []), ...(this.ntlmCred !== 0n ? [OID.ntlm] : [])];
  }

  /** An acceptor credential for `acceptorName` and the mechanisms of `mechs`, from the credential store `store`. */
  private acquire(mechs: Ptr, store: ReadonlyArray<[string, string]>, what: string, where: string): Ptr {
    const lib = this.lib;
    const encoder = new TextEncoder();
    const nameBytes = encoder.encode(this.acceptorName);
    const strings = store.flatMap(([k, v]) => [encoder.encode(`${k}\0`), encoder.encode(`${v}\0`)]);
    // minor 0 · name desc 8 · name out 24 · cred out 32 · store set 40 · elements 56 (16 each) · data after
    const elementsAt = 56;
    let dataAt = elementsAt + 16 * store.length;
    const size = dataAt + nameBytes.length + strings.reduce((n, s) => n + s.length, 0) + 8;
    const block = new NativeBlock(lib.koffi, size);
    let name = 0n;
    try {
      block.setBuffer(8, dataAt, nameBytes);
      dataAt += nameBytes.length;
      let status = lib.importName(block.at(0), block.at(8), lib.oids.hostbasedService, block.at(24));
      if (isError(status)) throw new ConfigError(`${what}: cannot import the name ${this.acceptorName}: ${statusText(lib, status, block.u32(0))}`);
      name = block.ptr(24);
      strings.forEach((bytes, i) => {
        block.bytes.set(bytes, dataAt);
        block.setPtr(elementsAt + 8 * i, block.at(dataAt));
        dataAt += bytes.length;
      });
      block.view.setUint32(40, store.length, true);
      block.setPtr(48, block.at(elementsAt));
      // Named, always: gss-ntlmssp 1.2.0 crashes on a credential store without a name.
      status = lib.acquireCredFrom(block.at(0), name, 0, mechs, GSS_C_ACCEPT, block.at(40), block.at(32), null, null);
      if (isError(status)) {
        const hint = mechs === lib.oids.ntlmSet ? ' (is gss-ntlmssp installed? MIT loads it through /etc/gss/mech.d/, Debian package gss-ntlmssp)' : '';
        throw new ConfigError(`${what}: no acceptor credential for ${this.acceptorName} ${where}: ${statusText(lib, status, block.u32(0))}${hint}`);
      }
      return block.ptr(32);
    } finally {
      if (name !== 0n) {
        block.setPtr(24, name);
        lib.releaseName(block.at(0), block.at(24));
      }
      block.free();
    }
  }

  createContext(mechanism: string, info: AcceptorInfo): GssapiKerberosContext | GssapiNtlmContext {
    if (this.closing) throw new NegotiateError('gssapi.closed', 'the GSSAPI backend is closed');
    const released = (): void => this.contextReleased();
    if ((mechanism === OID.kerberos || mechanism === OID.kerberosMicrosoft) && this.kerberosCred !== 0n) {
      this.open++;
      return new GssapiKerberosContext(this.lib, this.kerberosCred, mechanism, info, this.requireMutualAuth, released);
    }
    if (mechanism === OID.ntlm && this.ntlmCred !== 0n && this.ntlm !== undefined) {
      this.open++;
      return new GssapiNtlmContext(this.lib, this.ntlmCred, info, this.ntlm, released);
    }
    throw new NegotiateError('gssapi.mechanism', `${mechanism} is not offered`);
  }

  /** Contexts created and not yet released (for tests and diagnostics). */
  get openContexts(): number {
    return this.open;
  }

  /** Releases the acceptor credentials once every context is released; no context can be created afterwards. */
  close(): void {
    this.closing = true;
    if (this.open === 0) this.releaseCreds();
  }

  private contextReleased(): void {
    this.open--;
    if (this.closing && this.open === 0) this.releaseCreds();
  }

  private releaseCreds(): void {
    for (const key of ['kerberosCred', 'ntlmCred'] as const) {
      if (this[key] === 0n) continue;
      const block = new NativeBlock(this.lib.koffi, 16);
      block.setPtr(8, this[key]);
      this.lib.releaseCred(block.at(0), block.at(8));
      block.free();
      this[key] = 0n;
    }
  }
}

/**
 * KRB5_KTNAME, BRIDGE_NTLM_USERS when BRIDGE_NTLM_BACKEND=gssapi, and BRIDGE_DNS_IDENTITY (default `localhost`, as the
 * endpoint's); undefined when neither Kerberos nor NTLM through gss-ntlmssp is configured.
 */
export function gssapiBackendFromEnv(env: Environment, options: Partial<GssapiBackendOptions> = {}): GssapiBackend | undefined {
  const keytab = env.KRB5_KTNAME || undefined;
  const ntlmUsers = env.BRIDGE_NTLM_BACKEND === 'gssapi' ? env.BRIDGE_NTLM_USERS || undefined : undefined;
  if (keytab === undefined && ntlmUsers === undefined) return undefined;
  return new GssapiBackend({ keytab, ntlmUsers, dnsIdentity: env.BRIDGE_DNS_IDENTITY || 'localhost', ...options });
}

// ---- the contexts ----

/**
 * `user@REALM` as gss_display_name writes a principal, with the realm upper-cased (as normalizePeerName does). Never
 * read as `DOMAIN\user`: a backslash in a Kerberos name escapes the next character (`user\@upn.example@REALM`, an
 * enterprise principal), so the realm follows the last unescaped `@`.
 */
export function kerberosPeerName(display: string): string {
  const name = display.replace(/\0+$/, '').trim();
  let at = -1;
  for (let i = 0; i < name.length; i++) {
    if (name[i] === '\\') i++;
    else if (name[i] === '@') at = i;
  }
  return at > 0 ? `${name.slice(0, at)}@${name.slice(at + 1).toUpperCase()}` : name;
}

type ContextState = 'accepting' | 'done' | 'failed' | 'disposed';

function deleteContext(lib: GssLibrary, handle: { context: Ptr }): void {
  if (handle.context === 0n) return;
  const block = new NativeBlock(lib.koffi, 16);
  block.setPtr(8, handle.context);
  lib.deleteSecContext(block.at(0), block.at(8), null);
  block.free();
  handle.context = 0n;
}

/** A safety net: a context dropped without dispose() (a bug in its owner) still has its keys released, on GC. */
const orphans = new FinalizationRegistry<{ lib: GssLibrary; handle: { context: Ptr }; onRelease: () => void }>(({ lib, handle, onRelease }) => {
  deleteContext(lib, handle);
  onRelease();
});

/** What one gss_accept_sec_context call returned, taken out of native memory. */
interface Accepted {
  major: number;
  output: Uint8Array;
  /** gss_display_name of src_name, when the call succeeded and gave one. */
  peer: string | undefined;
  /** The mechanism's OID (dotted for the known ones, hex otherwise). */
  mechanism: string | undefined;
  flags: number;
}

/**
 * What both mechanisms share: gss_accept_sec_context off the event loop, the release of the library's context, and
 * the per-message calls. A subclass checks what a step returned (`finish`), names a refusal (`refusal`), may look at
 * a token before the library does (`admit`), and builds its protection on gssGetMic / gssVerifyMic / gssWrap /
 * gssUnwrap.
 */
abstract class GssapiContext implements MechanismContext {
  abstract readonly requireMechListMic: boolean;
  abstract readonly confidentiality: boolean;
  abstract readonly wrapOverhead: number;
  abstract getMic(message: Uint8Array, options?: MicOptions): Uint8Array;
  abstract verifyMic(message: Uint8Array, mic: Uint8Array, options?: MicOptions): void;
  abstract wrap(plain: Uint8Array): Uint8Array;
  abstract unwrap(payload: Uint8Array): Uint8Array;
  protected state: ContextState = 'accepting';
  /** The library's context handle, in an object of its own so that the finalizer below can hold it. */
  protected readonly handle = { context: 0n as Ptr };
  private stepping = false;
  private released = false;
  protected flags = 0;
  protected name: string | undefined;

  constructor(
    protected readonly lib: GssLibrary,
    private readonly cred: Ptr,
    readonly mechanism: string,
    protected readonly info: AcceptorInfo,
    /** For messages: `Kerberos`, `NTLM`. */
    private readonly label: string,
    private readonly onRelease: () => void,
  ) {
    orphans.register(this, { lib, handle: this.handle, onRelease }, this.handle);
  }

  get established(): boolean {
    return this.state === 'done';
  }

  get peerName(): string | undefined {
    return this.established ? this.name : undefined;
  }

  get integrity(): boolean {
    return this.established;
  }

  /** The context flags the library returned (GssFlag bits). */
  get contextFlags(): number {
    return this.flags;
  }

  /** Checks a client token before the library sees it; throws NegotiateError. */
  protected admit(_token: Uint8Array): void {}

  /** After a successful gss_accept_sec_context: the answer, or a NegotiateError. */
  protected abstract finish(accepted: Accepted): StepResult;

  /** The NegotiateError for a failed gss_accept_sec_context. */
  protected abstract refusal(major: number, minor: number): NegotiateError;

  /** Told of every refused step (for throttling). */
  protected failedStep(_error: NegotiateError): void {}

  step(token: Uint8Array): Promise<StepResult> {
    if (this.state !== 'accepting' || this.stepping) {
      return Promise.reject(new NegotiateError('gssapi.state', `no token expected in state ${this.state}`));
    }
    try {
      this.admit(token);
    } catch (error) {
      return Promise.reject(this.refuse(error));
    }
    const lib = this.lib;
    // minor 0 · context 8 · input desc 16 · src_name 32 · mech_type 40 · output desc 48 · ret_flags 64 · time_rec 68 · token 72
    const block = new NativeBlock(lib.koffi, 72 + token.length);
    block.setPtr(8, this.handle.context);
    block.setBuffer(16, 72, token);
    this.stepping = true;
    return new Promise<StepResult>((resolve, reject) => {
      const settle = (error: unknown, major: number): void => {
        this.stepping = false;
        let outcome: { result: StepResult } | { error: unknown };
        try {
          outcome = { result: this.accepted(block, error, major) };
        } catch (failure) {
          outcome = { error: failure };
        } finally {
          block.free();
        }
        if ('error' in outcome) reject(this.refuse(outcome.error));
        else resolve(outcome.result);
      };
      try {
        lib.acceptSecContext.async(
          block.at(0),
          block.at(8),
          this.cred,
          block.at(16),
          null,
          block.at(32),
          block.at(40),
          block.at(48),
          block.at(64),
          block.at(68),
          null,
          (error: unknown, major: number) => settle(error, major),
        );
      } catch (error) {
        settle(error, 0);
      }
    });
  }

  /** A refused step: the context fails and is released; the caller rejects with the returned NegotiateError. */
  private refuse(failure: unknown): NegotiateError {
    const error = failure instanceof NegotiateError ? failure : new NegotiateError('gssapi.refused', String(failure));
    if (this.state === 'accepting') this.state = 'failed';
    this.release();
    this.failedStep(error);
    return error;
  }

  /** After gss_accept_sec_context: takes what it returned (always, so nothing leaks), then decides. */
  private accepted(block: NativeBlock, callError: unknown, major: number): StepResult {
    const lib = this.lib;
    if (callError !== null && callError !== undefined) {
      throw new NegotiateError('gssapi.refused', `the call failed: ${callError instanceof Error ? callError.message : String(callError)}`);
    }
    const minor = block.u32(0); // before any release call reuses the minor status word
    this.handle.context = block.ptr(8);
    const output = takeBuffer(lib, block, 48, 0);
    const srcName = block.ptr(32);
    let peer: string | undefined;
    if (srcName !== 0n) {
      if (!isError(major)) peer = this.displayName(srcName);
      block.setPtr(32, srcName);
      lib.releaseName(block.at(0), block.at(32));
    }
    if (this.state === 'disposed') throw new NegotiateError('gssapi.disposed', 'the connection closed during the handshake');
    if (isError(major)) throw this.refusal(major, minor);
    return this.finish({ major, output, peer, mechanism: this.mechanismOf(block.ptr(40)), flags: block.u32(64) });
  }

  /** The library's words for a status, for refusal details. */
  protected statusText(major: number, minor: number): string {
    return statusText(this.lib, major, minor);
  }

  private displayName(name: Ptr): string {
    const lib = this.lib;
    const block = new NativeBlock(lib.koffi, 32);
    try {
      const status = lib.displayName(block.at(0), name, block.at(8), null);
      if (isError(status)) return '';
      return new TextDecoder('utf-8', { fatal: false }).decode(takeBuffer(lib, block, 8, 0));
    } finally {
      block.free();
    }
  }

  private mechanismOf(oid: Ptr): string | undefined {
    if (oid === 0n) return undefined;
    const koffi = this.lib.koffi;
    const desc = new DataView(koffi.view(oid, 16));
    const length = desc.getUint32(0, true);
    const elements = desc.getBigUint64(8, true);
    if (length === 0 || length > 64 || elements === 0n) return undefined;
    const bytes = new Uint8Array(koffi.view(elements, length));
    const same = (expected: readonly number[]): boolean => expected.length === bytes.length && expected.every((b, i) => bytes[i] === b);
    if (same(OID_BYTES.kerberos)) return OID.kerberos;
    if (same(OID_BYTES.kerberosMicrosoft)) return OID.kerberosMicrosoft;
    if (same(OID_BYTES.ntlm)) return OID.ntlm;
    return Buffer.from(bytes).toString('hex');
  }

  // ---- per-message calls on the established context ----

  protected gssGetMic(message: Uint8Array): Uint8Array {
    const context = this.ready();
    const lib = this.lib;
    // minor 0 · message desc 8 · token desc 24 · message 40
    const block = new NativeBlock(lib.koffi, 40 + message.length);
    try {
      block.setBuffer(8, 40, message);
      const status = lib.getMic(block.at(0), context, 0, block.at(8), block.at(24));
      const minor = block.u32(0);
      const token = takeBuffer(lib, block, 24, 0);
      if (isError(status)) throw this.broken('Broken', `gss_get_mic: ${statusText(lib, status, minor)}`);
      return token;
    } finally {
      block.free();
    }
  }

  /** gss_verify_mic on `context`: its major status and minor code, no more (a failure is the caller's to judge). */
  protected verifyMicStatus(context: Ptr, message: Uint8Array, mic: Uint8Array): { status: number; minor: number } {
    const lib = this.lib;
    // minor 0 · message desc 8 · token desc 24 · qop 40 · message 48 · token after
    const block = new NativeBlock(lib.koffi, 48 + message.length + mic.length);
    try {
      block.setBuffer(8, 48, message);
      block.setBuffer(24, 48 + message.length, mic);
      const status = lib.verifyMic(block.at(0), context, block.at(8), block.at(24), block.at(40));
      return { status, minor: block.u32(0) };
    } finally {
      block.free();
    }
  }

  /** gss_verify_mic; a MIC that does not verify breaks the context. Returns the status (its supplementary bits). */
  protected gssVerifyMic(message: Uint8Array, mic: Uint8Array): number {
    const { status, minor } = this.verifyMicStatus(this.ready(), message, mic);
    if (isError(status)) throw this.broken('BadSignature', `gss_verify_mic: ${statusText(this.lib, status, minor)}`);
    return status;
  }

  protected gssWrap(plain: Uint8Array, conf: boolean): Uint8Array {
    const context = this.ready();
    const lib = this.lib;
    // minor 0 · input desc 8 · output desc 24 · conf_state 40 · plaintext 48
    const block = new NativeBlock(lib.koffi, 48 + plain.length);
    try {
      block.setBuffer(8, 48, plain);
      const status = lib.wrap(block.at(0), context, conf ? 1 : 0, 0, block.at(8), block.at(40), block.at(24));
      const minor = block.u32(0);
      const token = takeBuffer(lib, block, 24, 0);
      if (isError(status)) throw this.broken('Broken', `gss_wrap: ${statusText(lib, status, minor)}`);
      if (conf && block.u32(40) === 0) throw this.broken('Broken', 'gss_wrap did not seal');
      return token;
    } finally {
      block.free();
    }
  }

  /** gss_unwrap; a token that does not verify breaks the context. */
  protected gssUnwrap(payload: Uint8Array): { plain: Uint8Array; conf: boolean; status: number } {
    const context = this.ready();
    const lib = this.lib;
    // minor 0 · input desc 8 · output desc 24 · conf_state 40 · qop 44 · payload 48
    const block = new NativeBlock(lib.koffi, 48 + payload.length);
    try {
      block.setBuffer(8, 48, payload);
      const status = lib.unwrap(block.at(0), context, block.at(8), block.at(24), block.at(40), block.at(44));
      const minor = block.u32(0);
      const plain = takeBuffer(lib, block, 24, 0);
      if (isError(status)) throw this.broken('BadSignature', `gss_unwrap: ${statusText(lib, status, minor)}`);
      return { plain, conf: block.u32(40) !== 0, status };
    } finally {
      block.free();
    }
  }

  protected ready(): Ptr {
    if (this.state !== 'done' || this.handle.context === 0n) throw new IntegrityError('Broken', `the ${this.label} context is ${this.state === 'done' ? 'released' : 'not established'}`);
    return this.handle.context;
  }

  /** A protection failure breaks the context for good: the keys are released, later calls throw. */
  protected broken(kind: 'BadSignature' | 'OutOfSequence' | 'Malformed' | 'Broken', message: string): IntegrityError {
    this.state = 'failed';
    this.release();
    return new IntegrityError(kind, message);
  }

  dispose(): void {
    if (this.state === 'accepting' || this.state === 'done') this.state = 'disposed';
    if (!this.stepping) this.release();
  }

  /** Deletes the library's context (its keys) once; never while gss_accept_sec_context runs on it. */
  private release(): void {
    if (this.released || this.stepping) return;
    this.released = true;
    orphans.unregister(this.handle);
    deleteContext(this.lib, this.handle);
    this.onRelease();
  }
}

/** RFC 4121 wrap token id: its header carries SND_SEQ (big-endian) at bytes 8..15. */
const CFX_WRAP = 0x0504;
const CFX_SENT_BY_ACCEPTOR = 0x01;
/** See computeOverhead. */
const MIN_WRAP_OVERHEAD = 72;

export class GssapiKerberosContext extends GssapiContext {
  readonly requireMechListMic = false;
  private overhead = 0;
  /** The SND_SEQ the client's next token must carry (undefined until the first verified token). */
  private nextSeq: bigint | undefined;

  constructor(lib: GssLibrary, cred: Ptr, mechanism: string, info: AcceptorInfo, private readonly requireMutualAuth: boolean, onRelease: () => void) {
    super(lib, cred, mechanism, info, 'Kerberos', onRelease);
  }

  get confidentiality(): boolean {
    return this.established && (this.flags & GssFlag.Conf) !== 0;
  }

  get wrapOverhead(): number {
    return this.overhead;
  }

  protected refusal(major: number, minor: number): NegotiateError {
    return new NegotiateError(KRB5_REASONS.get(minor | 0) ?? 'gssapi.refused', this.statusText(major, minor));
  }

  protected finish({ major, output, peer, mechanism, flags }: Accepted): StepResult {
    if (mechanism !== OID.kerberos && mechanism !== OID.kerberosMicrosoft) throw new NegotiateError('gssapi.mechanism', `the library chose ${mechanism ?? 'no mechanism'}`);
    if ((major & GSS_S_CONTINUE_NEEDED) !== 0) {
      if (output.length === 0) throw new NegotiateError('gssapi.refused', 'continue needed without a token');
      return { token: output, done: false };
    }
    if ((flags & GssFlag.Anon) !== 0) throw new NegotiateError('gssapi.anonymous', 'an anonymous principal');
    if (this.requireMutualAuth && (flags & GssFlag.Mutual) === 0) throw new NegotiateError('gssapi.not-mutual', 'the client did not ask for mutual authentication');
    if (peer === undefined || peer === '') throw new NegotiateError('gssapi.refused', 'no peer name');
    this.flags = flags;
    this.name = kerberosPeerName(peer);
    this.state = 'done';
    this.overhead = this.computeOverhead();
    return output.length > 0 ? { token: output, done: true } : { done: true };
  }

  /**
   * What gss_wrap adds at most. MIT 1.20's gss_wrap_size_limit under-reports sealed RFC 4121 tokens (28 bytes for
   * AES, where a wrap adds 60: header, confounder, encrypted header copy, HMAC), so its figure is only taken when it
   * is larger than 72, the most an RFC 4121 or RFC 4757 token adds with any enctype MIT offers (AES-SHA2-384's
   * 24-byte HMAC included).
   */
  private computeOverhead(): number {
    const block = new NativeBlock(this.lib.koffi, 16);
    try {
      const limit = 0xfc30;
      const status = this.lib.wrapSizeLimit(block.at(0), this.handle.context, this.confidentiality ? 1 : 0, 0, limit, block.at(8));
      const max = block.u32(8);
      const reported = isError(status) || max > limit ? 0 : limit - max;
      return Math.max(reported, MIN_WRAP_OVERHEAD);
    } finally {
      block.free();
    }
  }

  getMic(message: Uint8Array, _options?: MicOptions): Uint8Array {
    return this.gssGetMic(message);
  }

  verifyMic(message: Uint8Array, mic: Uint8Array, _options?: MicOptions): void {
    const status = this.gssVerifyMic(message, mic);
    // The library's sequence bits only: our own order starts at the first data frame (see checkSequence).
    if ((status & SEQUENCE_PROBLEMS) !== 0) throw this.broken('OutOfSequence', `gss_verify_mic status 0x${(status >>> 0).toString(16)}`);
  }

  wrap(plain: Uint8Array): Uint8Array {
    return this.gssWrap(plain, this.confidentiality);
  }

  unwrap(payload: Uint8Array): Uint8Array {
    const { plain, conf, status } = this.gssUnwrap(payload);
    if (this.info.protectionLevel === 'EncryptAndSign' && !conf) {
      plain.fill(0);
      throw this.broken('Malformed', 'a signed-only frame where EncryptAndSign is required');
    }
    this.checkSequence(status, payload);
    return plain;
  }

  /**
   * After the library verified a data frame: its supplementary sequence bits (when the client asked for detection),
   * then our own strict order on the RFC 4121 SND_SEQ, which the library has authenticated by then (the checksum
   * covers the header of a signed token; for a sealed one the library compares it with the encrypted copy). The
   * first data frame sets the start: the mechListMIC does not, as initiators need not count it alike. An attacker
   * who withholds the first frames gains nothing either: the first frame holds the rest of the NMF preamble, without
   * which the framing layer faults.
   */
  private checkSequence(major: number, token: Uint8Array): void {
    if ((major & SEQUENCE_PROBLEMS) !== 0) throw this.broken('OutOfSequence', `gss_unwrap status 0x${(major >>> 0).toString(16)} (duplicate, old, unsequenced or gap)`);
    if (token.length < 16 || ((token[0]! << 8) | token[1]!) !== CFX_WRAP) return; // RFC 1964 token: the library's checks only
    if ((token[2]! & CFX_SENT_BY_ACCEPTOR) !== 0) throw this.broken('BadSignature', 'a token sent by the acceptor'); // the library refuses these too
    const seq = new DataView(token.buffer, token.byteOffset, 16).getBigUint64(8, false);
    if (this.nextSeq !== undefined && seq !== this.nextSeq) throw this.broken('OutOfSequence', `sequence number ${seq}, ${this.nextSeq} expected`);
    this.nextSeq = (seq + 1n) & 0xffffffffffffffffn;
  }
}

/** An NTLM message signature (MS-NLMP 2.2.2.9.1): version 1, checksum, then the sequence number at bytes 12..15. */
const NTLM_SIGNATURE = 16;
const u32le = (b: Uint8Array, at: number): number => new DataView(b.buffer, b.byteOffset + at, 4).getUint32(0, true);

/**
 * NTLM through gss-ntlmssp, behind the gate described at the top of this file. Its states: `negotiate` (the next
 * token is the NEGOTIATE), `authenticate` (the library answered with a CHALLENGE), then established.
 */
export class GssapiNtlmContext extends GssapiContext {
  readonly requireMechListMic = true;
  readonly wrapOverhead = NTLM_SIGNATURE;
  private leg: 'negotiate' | 'authenticate' = 'negotiate';
  private issuedAt = 0;
  /** The CHALLENGE's MsvAvTimestamp, its SEAL flag and NetBIOS computer name. */
  private challenge: { timestamp: Uint8Array; sealing: boolean; netbiosName: string } | undefined;
  /** `DOMAIN\user` as the AUTHENTICATE claims it, for throttling. */
  private claimed: string | undefined;
  /** The sequence number the client's next signature must carry. */
  private receiveSeq = 0;
  /** Without SEAL: the form of the client's frames, once its first frame told (see unwrap). */
  private form: 'sealed' | 'plain' | undefined;

  constructor(lib: GssLibrary, cred: Ptr, info: AcceptorInfo, private readonly gate: NtlmGateSettings, onRelease: () => void) {
    super(lib, cred, OID.ntlm, info, 'NTLM', onRelease);
  }

  get confidentiality(): boolean {
    return this.established && (this.flags & GssFlag.Conf) !== 0;
  }

  protected override admit(token: Uint8Array): void {
    const gate = this.gate;
    if (this.leg === 'negotiate') {
      admitNegotiate(token, 1024, this.info.protectionLevel);
      if (token.length < 40) throw new NegotiateError('ntlm.negotiate-no-version', `a ${token.length}-byte NEGOTIATE, which gss-ntlmssp 1.2 cannot read`);
      return;
    }
    const admitted = admitAuthenticate(token, { maxBytes: 8192, ageMs: gate.now() - this.issuedAt, lifetimeMs: gate.challengeLifetimeMs, sealing: this.challenge!.sealing });
    this.claimed = admitted.claimed;
    if ('reason' in admitted) throw new NegotiateError(admitted.reason, admitted.detail);
    if (gate.throttle.blocked(admitted.claimed, this.info.remoteAddress)) {
      // Refused before the library looks at any password; the client sees the usual error.
      throw new NegotiateError('ntlm.throttled', `${admitted.claimed} from ${this.info.remoteAddress}`);
    }
    const refusal = checkNtlmV2Pairs(admitted.auth, admitted.response, { timestamp: this.challenge!.timestamp, targetNames: gate.targetNames });
    if (refusal) throw new NegotiateError(refusal.reason, refusal.detail);
    // With MsvAvTimestamp in the CHALLENGE a client sends Z(24) as LmChallengeResponse (MS-NLMP 3.1.5.1.2). A real one
    // would let gss-ntlmssp fall back to LMv2 (as a domain member it does), whose proof covers neither MsvAvFlags nor
    // the timestamp: the MIC could then be stripped.
    if (admitted.auth.lmResponse.some((b) => b !== 0)) throw new NegotiateError('ntlm.lm-response', 'an LMv2 response beside the NTLMv2 one');
  }

  protected override failedStep(error: NegotiateError): void {
    if (this.leg !== 'authenticate' || error.reason === 'ntlm.throttled' || error.reason === 'gssapi.disposed') return;
    this.gate.throttle.failed(this.claimed, this.info.remoteAddress);
  }

  protected refusal(major: number, minor: number): NegotiateError {
    const detail = this.statusText(major, minor);
    if (this.leg === 'authenticate') {
      if (minor === NTLM_MINOR.noAccount) return new NegotiateError('gssapi.bad-proof', `unknown user ${this.claimed}: ${detail}`);
      if (minor === NTLM_MINOR.badProof) return new NegotiateError('gssapi.bad-proof', `wrong password for ${this.claimed}: ${detail}`);
      if (minor === NTLM_MINOR.badMic) return new NegotiateError('gssapi.bad-mic', `${this.claimed}: ${detail}`);
    }
    return new NegotiateError('gssapi.refused', detail);
  }

  protected finish({ major, output, peer, mechanism, flags }: Accepted): StepResult {
    const more = (major & GSS_S_CONTINUE_NEEDED) !== 0;
    // MIT's mechanism glue names the mechanism once the context is complete (none with the CHALLENGE).
    if (mechanism !== OID.ntlm && (!more || mechanism !== undefined)) throw new NegotiateError('gssapi.mechanism', `the library chose ${mechanism ?? 'no mechanism'}`);
    if (this.leg === 'negotiate') {
      if (!more || output.length === 0) throw new NegotiateError('gssapi.refused', 'no CHALLENGE after the NEGOTIATE');
      this.checkChallenge(output);
      this.issuedAt = this.gate.now();
      this.leg = 'authenticate';
      return { token: output, done: false };
    }
    if (more) throw new NegotiateError('gssapi.refused', 'continue needed after the AUTHENTICATE');
    if ((flags & GssFlag.Anon) !== 0) throw new NegotiateError('ntlm.anonymous', 'an anonymous logon');
    if (peer === undefined || peer === '') throw new NegotiateError('gssapi.refused', 'no peer name');
    this.flags = flags;
    this.name = this.identity(peer);
    this.gate.throttle.succeeded(this.claimed!);
    this.state = 'done';
    return output.length > 0 ? { token: output, done: true } : { done: true };
  }

  /**
   * The CHALLENGE the library wrote must grant what ntlm.ts requires (LM_COMPAT_LEVEL below 3, or a client that did
   * not offer it, would make gss-ntlmssp settle for less) and carry the MsvAvTimestamp the client must echo.
   */
  private checkChallenge(bytes: Uint8Array): void {
    const challenge = parseChallenge(bytes);
    if (!challenge) throw new NegotiateError('gssapi.refused', 'the library wrote no readable CHALLENGE');
    const required = REQUIRED_NTLM_FLAGS | (this.info.protectionLevel === 'EncryptAndSign' ? NtlmFlag.Seal : 0);
    if ((challenge.flags & required) !== required) {
      throw new NegotiateError('ntlm.weak-flags', `gss-ntlmssp granted flags 0x${(challenge.flags >>> 0).toString(16)} (LM_COMPAT_LEVEL below 3?)`);
    }
    const pair = (id: number): Uint8Array | undefined => challenge.targetInfo.find((p) => p.id === id)?.value;
    const timestamp = pair(AvId.Timestamp);
    if (timestamp === undefined || timestamp.length !== 8) throw new NegotiateError('gssapi.refused', 'the CHALLENGE has no MsvAvTimestamp');
    const netbios = pair(AvId.NbComputerName);
    this.challenge = {
      timestamp: timestamp.slice(),
      sealing: (challenge.flags & NtlmFlag.Seal) !== 0,
      netbiosName: netbios === undefined ? '' : new TextDecoder('utf-16le').decode(netbios),
    };
  }

  /** `DOMAIN\user` from the library's name (trailing NUL dropped), as the users file's line writes it. */
  private identity(display: string): string {
    const shown = display.replace(/\0+$/, '').trim();
    const slash = shown.indexOf('\\');
    const account = this.gate.accounts.find(shown.slice(slash + 1), slash > 0 ? shown.slice(0, slash) : '');
    if (account === undefined) return normalizePeerName(shown);
    return normalizePeerName(`${account.domain === '' ? this.challenge!.netbiosName : account.domain}\\${account.user}`);
  }

  /** SPNEGO's mechListMIC (sequence number 0), then the send handle's RC4 reset (MS-SPNG 3.3.5.1). */
  getMic(message: Uint8Array, options?: MicOptions): Uint8Array {
    const mic = this.gssGetMic(message);
    if (options?.mechListMic) this.resetCrypto('send');
    return mic;
  }

  verifyMic(message: Uint8Array, mic: Uint8Array, options?: MicOptions): void {
    this.checkSignature(mic);
    this.gssVerifyMic(message, mic);
    this.receiveSeq++;
    if (options?.mechListMic) this.resetCrypto('receive');
  }

  private resetCrypto(direction: 'send' | 'receive'): void {
    const context = this.ready();
    // minor 0 · context 8 · value desc 16 · value 32
    const block = new NativeBlock(this.lib.koffi, 40);
    try {
      block.setPtr(8, context);
      block.setBuffer(16, 32, Uint8Array.of(direction === 'receive' ? 1 : 0, 0, 0, 0)); // a uint32: 1 resets the verifier
      const status = this.lib.setSecContextOption(block.at(0), block.at(8), this.lib.oids.ntlmResetCrypto, block.at(16));
      if (isError(status)) throw this.broken('Broken', `gss_set_sec_context_option (reset crypto): ${this.statusText(status, block.u32(0))}`);
    } finally {
      block.free();
    }
  }

  /** The sealed form when SEAL was negotiated or the client used it; MS-NLMP's signature ‖ plaintext otherwise. */
  wrap(plain: Uint8Array): Uint8Array {
    if (this.confidentiality || this.form === 'sealed') return this.gssWrap(plain, true);
    const signature = this.gssGetMic(plain);
    const out = new Uint8Array(signature.length + plain.length);
    out.set(signature);
    out.set(plain, signature.length);
    return out;
  }

  unwrap(payload: Uint8Array): Uint8Array {
    this.ready();
    if (payload.length <= NTLM_SIGNATURE) throw this.broken('Malformed', `a ${payload.length}-byte payload holds no NTLM signature and data`);
    const signature = payload.subarray(0, NTLM_SIGNATURE);
    this.checkSignature(signature);
    let plain: Uint8Array;
    if (this.confidentiality || this.form === 'sealed') plain = this.gssUnwrap(payload).plain;
    else if (this.form === 'plain') {
      this.gssVerifyMic(payload.subarray(NTLM_SIGNATURE), signature);
      plain = payload.slice(NTLM_SIGNATURE);
    } else plain = this.firstSignedFrame(payload);
    this.receiveSeq++;
    return plain;
  }

  /** Version 1 and the sequence number due, before the library is asked (it would only say "bad signature"). */
  private checkSignature(signature: Uint8Array): void {
    this.ready();
    if (signature.length !== NTLM_SIGNATURE || u32le(signature, 0) !== 1) throw this.broken('Malformed', 'not an NTLM signature (version 1, 16 bytes)');
    const seq = u32le(signature, 12);
    if (seq !== this.receiveSeq) throw this.broken('OutOfSequence', `sequence number ${seq} where ${this.receiveSeq} was due`);
  }

  /**
   * A signing-only context's first frame: MS-NLMP's form (Windows SSPI) or sealed (gss-ntlmssp, .NET's managed NTLM).
   * Each try moves the library's RC4 handle and sequence number, so both run on copies of the context
   * (gss_export_sec_context, gss_import_sec_context twice) and the one whose form verified is kept.
   */
  private firstSignedFrame(payload: Uint8Array): Uint8Array {
    const [plainCopy, sealedCopy] = this.copies();
    const body = payload.subarray(NTLM_SIGNATURE);
    if (!isError(this.verifyMicStatus(plainCopy, body, payload.subarray(0, NTLM_SIGNATURE)).status)) {
      this.handle.context = plainCopy;
      deleteContext(this.lib, { context: sealedCopy });
      this.form = 'plain';
      return body.slice();
    }
    deleteContext(this.lib, { context: plainCopy });
    this.handle.context = sealedCopy;
    const { plain } = this.gssUnwrap(payload);
    this.form = 'sealed';
    return plain;
  }

  /** Two copies of the context through an exported token (the original is gone after the export). */
  private copies(): [Ptr, Ptr] {
    const lib = this.lib;
    // minor 0 · context 8 · token desc 16 · copy 32 · copy 40
    const block = new NativeBlock(lib.koffi, 48);
    try {
      block.setPtr(8, this.handle.context);
      const exported = lib.exportSecContext(block.at(0), block.at(8), block.at(16));
      this.handle.context = block.ptr(8);
      if (isError(exported)) throw this.broken('Broken', `gss_export_sec_context: ${this.statusText(exported, block.u32(0))}`);
      const first = lib.importSecContext(block.at(0), block.at(16), block.at(32));
      const second = isError(first) ? first : lib.importSecContext(block.at(0), block.at(16), block.at(40));
      const minor = block.u32(0);
      // The token holds the session keys: zeroed before the library frees it.
      const length = Number(block.ptr(16));
      const value = block.ptr(24);
      if (value !== 0n && length > 0) new Uint8Array(lib.koffi.view(value, length)).fill(0);
      if (value !== 0n) lib.releaseBuffer(block.at(0), block.at(16));
      if (isError(first) || isError(second)) {
        deleteContext(lib, { context: block.ptr(32) });
        throw this.broken('Broken', `gss_import_sec_context: ${this.statusText(isError(first) ? first : second, minor)}`);
      }
      return [block.ptr(32), block.ptr(40)];
    } finally {
      block.free();
    }
  }
}
