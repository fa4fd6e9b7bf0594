/**
 * The system GSSAPI (MIT `libgssapi_krb5.so.2`) through koffi: the functions this backend calls, the constants of
 * RFC 2744 and MIT's gssapi.h it needs, and the native memory of each call. Nothing here decides anything.
 *
 * - koffi (`^3.3.4`) ships its native part as per-platform packages (`@koromix/koffi-linux-x64`, …) chosen through
 *   optionalDependencies; no install script is needed. koffi and the library are loaded when a GssapiBackend is made,
 *   not at import, so that importing this module costs nothing where GSSAPI is not configured; each is a ConfigError
 *   when it cannot be loaded.
 * - The structures are laid out by hand (see loadGssapi); every pointer is a koffi BigInt (or null for NULL).
 * - A call's arguments (status words, handles, buffer descriptors and the bytes they point to) live in a NativeBlock,
 *   zeroed and freed after the call; what the library hands out is copied out and released at once (takeBuffer).
 *   The OIDs the library is given stay allocated for the life of the process (it keeps pointers to them).
 */

import { createRequire } from 'node:module';
import { endianness } from 'node:os';
import { ConfigError } from '#idb';

// ---- constants (RFC 2744, MIT gssapi.h) ----

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

export const GSS_C_ACCEPT = 2;
const GSS_C_GSS_CODE = 1;
const GSS_C_MECH_CODE = 2;
export const GSS_S_CONTINUE_NEEDED = 1;
const GSS_S_DUPLICATE_TOKEN = 2;
const GSS_S_OLD_TOKEN = 4;
const GSS_S_UNSEQ_TOKEN = 8;
const GSS_S_GAP_TOKEN = 16;
export const SEQUENCE_PROBLEMS = GSS_S_DUPLICATE_TOKEN | GSS_S_OLD_TOKEN | GSS_S_UNSEQ_TOKEN | GSS_S_GAP_TOKEN;
/** The calling and routine error fields of a major status: zero means success (maybe with supplementary bits). */
export const isError = (major: number): boolean => (major & 0xffff0000) !== 0;

/** DER contents (no tag, no length) of the OIDs the library is given. */
export const OID_BYTES = {
  hostbasedService: [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x01, 0x04], // 1.2.840.113554.1.2.1.4
  kerberos: [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02], // 1.2.840.113554.1.2.2
  kerberosMicrosoft: [0x2a, 0x86, 0x48, 0x82, 0xf7, 0x12, 0x01, 0x02, 0x02], // 1.2.840.48018.1.2.2
  ntlm: [0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a], // 1.3.6.1.4.1.311.2.2.10
  /** gss-ntlmssp's GSS_NTLMSSP_RESET_CRYPTO_OID (1.3.6.1.4.1.7165.655.1.3), for gss_set_sec_context_option. */
  ntlmResetCrypto: [0x2b, 0x06, 0x01, 0x04, 0x01, 0xb7, 0x7d, 0x85, 0x0f, 0x01, 0x03],
} as const;

// ---- the library through koffi ----

export type Ptr = bigint;
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
export interface GssLibrary {
  koffi: KoffiModule;
  importName: NativeFn;
  acquireCredFrom: NativeFn;
  acceptSecContext: NativeFn;
  displayName: NativeFn;
  /** RFC 6680: what MIT exposes of a ticket's authorization data (the PAC) on the peer's name. */
  getNameAttribute: NativeFn;
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

/** Loads koffi and the GSSAPI library (once per path); throws ConfigError when either cannot be loaded. */
export function loadGssapi(path = 'libgssapi_krb5.so.2'): GssLibrary {
  const cached = libraries.get(path);
  if (cached) return cached;
  let koffi: KoffiModule;
  try {
    koffi = createRequire(import.meta.url)('koffi') as KoffiModule;
  } catch (error) {
    throw new ConfigError(
      `The GSSAPI backend (KRB5_KTNAME, BRIDGE_NTLM_BACKEND=gssapi) needs the koffi package for this platform: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  // The structures below are laid out by hand for LP64 little-endian ABIs (x86-64, arm64, riscv64, loong64).
  if (koffi.sizeof('void *') !== 8 || koffi.sizeof('size_t') !== 8 || endianness() !== 'LE') {
    throw new ConfigError(`The GSSAPI backend needs a 64-bit little-endian platform, not ${process.arch}`);
  }
  let lib: ReturnType<KoffiModule['load']>;
  try {
    lib = koffi.load(path);
  } catch (error) {
    throw new ConfigError(
      `The GSSAPI backend (KRB5_KTNAME, BRIDGE_NTLM_BACKEND=gssapi) needs MIT GSSAPI (${path}, Debian package libgssapi-krb5-2): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const f = (definition: string): NativeFn => lib.func(definition);
  const library: GssLibrary = {
    koffi,
    importName: f(
      'uint32 gss_import_name(void *minor, void *input_name_buffer, void *input_name_type, void *output_name)',
    ),
    acquireCredFrom: f(
      'uint32 gss_acquire_cred_from(void *minor, void *desired_name, uint32 time_req, void *desired_mechs, int cred_usage, void *cred_store, void *output_cred, void *actual_mechs, void *time_rec)',
    ),
    acceptSecContext: f(
      'uint32 gss_accept_sec_context(void *minor, void *context_handle, void *acceptor_cred, void *input_token, void *channel_bindings, void *src_name, void *mech_type, void *output_token, void *ret_flags, void *time_rec, void *delegated_cred)',
    ),
    displayName: f(
      'uint32 gss_display_name(void *minor, void *name, void *output_name_buffer, void *output_name_type)',
    ),
    getNameAttribute: f(
      'uint32 gss_get_name_attribute(void *minor, void *name, void *attr, void *authenticated, void *complete, void *value, void *display_value, void *more)',
    ),
    displayStatus: f(
      'uint32 gss_display_status(void *minor, uint32 status_value, int status_type, void *mech_type, void *message_context, void *status_string)',
    ),
    wrap: f(
      'uint32 gss_wrap(void *minor, void *context, int conf_req_flag, uint32 qop_req, void *input_message, void *conf_state, void *output_message)',
    ),
    unwrap: f(
      'uint32 gss_unwrap(void *minor, void *context, void *input_message, void *output_message, void *conf_state, void *qop_state)',
    ),
    getMic: f('uint32 gss_get_mic(void *minor, void *context, uint32 qop_req, void *message, void *token)'),
    verifyMic: f('uint32 gss_verify_mic(void *minor, void *context, void *message, void *token, void *qop_state)'),
    wrapSizeLimit: f(
      'uint32 gss_wrap_size_limit(void *minor, void *context, int conf_req_flag, uint32 qop_req, uint32 req_output_size, void *max_input_size)',
    ),
    setSecContextOption: f(
      'uint32 gss_set_sec_context_option(void *minor, void *context, void *desired_object, void *value)',
    ),
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
export class NativeBlock {
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
export function takeBuffer(lib: GssLibrary, block: NativeBlock, descOffset: number, minorOffset: number): Uint8Array {
  const length = Number(block.ptr(descOffset));
  const value = block.ptr(descOffset + 8);
  let out = new Uint8Array(0);
  if (length > 0 && value !== 0n) out = new Uint8Array(lib.koffi.view(value, length)).slice();
  if (value !== 0n) lib.releaseBuffer(block.at(minorOffset), block.at(descOffset));
  return out;
}

/** One value of a name attribute, or why there is none (the library's status). */
export type NameAttribute =
  | { found: true; value: Uint8Array; authenticated: boolean; complete: boolean }
  | { found: false; major: number; minor: number };

/**
 * The first value of the RFC 6680 attribute `attribute` of `name` (gss_get_name_attribute with more = -1), copied
 * out; the library's buffers are released. `authenticated` is the library's word that the value was verified.
 */
export function nameAttribute(lib: GssLibrary, name: Ptr, attribute: string): NameAttribute {
  const attr = new TextEncoder().encode(attribute);
  // minor 0 · attr desc 8 · authenticated 24 · complete 28 · value desc 32 · display desc 48 · more 64 · attr 72
  const block = new NativeBlock(lib.koffi, 72 + attr.length);
  try {
    block.setBuffer(8, 72, attr);
    block.view.setInt32(64, -1, true);
    const major = lib.getNameAttribute(
      block.at(0),
      name,
      block.at(8),
      block.at(24),
      block.at(28),
      block.at(32),
      block.at(48),
      block.at(64),
    );
    const minor = block.u32(0);
    const value = takeBuffer(lib, block, 32, 0);
    takeBuffer(lib, block, 48, 0);
    if (isError(major)) return { found: false, major, minor };
    return {
      found: true,
      value,
      authenticated: block.view.getInt32(24, true) !== 0,
      complete: block.view.getInt32(28, true) !== 0,
    };
  } finally {
    block.free();
  }
}

/** The library's words for a status (major and minor), for log lines. */
export function statusText(lib: GssLibrary, major: number, minor: number): string {
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

/** Deletes the library's context (its keys) behind `handle`, once: the handle is zeroed. */
export function deleteContext(lib: GssLibrary, handle: { context: Ptr }): void {
  if (handle.context === 0n) return;
  const block = new NativeBlock(lib.koffi, 16);
  block.setPtr(8, handle.context);
  lib.deleteSecContext(block.at(0), block.at(8), null);
  block.free();
  handle.context = 0n;
}
