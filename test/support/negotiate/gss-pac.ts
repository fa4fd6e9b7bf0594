/**
 * For the tests (the backend reads the PAC in tcp-bridge/src/negotiate/gssapi/kerberos.ts): accept one Kerberos AP-REQ
 * with MIT's GSSAPI (libgssapi_krb5.so.2 through koffi, as gssapi/ffi.ts does) and read what the library exposes of the
 * ticket's PAC through RFC 6680 naming extensions on the peer name, before the name is released:
 *
 *   gss_inquire_name(name)                         the attribute names: `urn:mspac:`, `urn:mspac:logon-info`,
 *                                                  `urn:mspac:client-info`, `urn:mspac:upn-dns-info`, the checksums,
 *                                                  `urn:mspac:<n>` for buffer types MIT has no name for
 *   gss_get_name_attribute(name, attr, &authenticated, &complete, &value, &display, &more = -1)
 *                                                  the buffer's bytes; authenticated = the PAC's server checksum
 *                                                  verified with the service key and its client info matches the
 *                                                  ticket (MIT hides an unverified PAC: GSS_S_UNAVAILABLE)
 *
 * The initiator is python3-gssapi (a ticket from the ccache in KRB5CCNAME for `host@<dns>`), so this needs
 * /usr/bin/python3 with gssapi, and a keytab for the acceptor.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';

const run = promisify(execFile);

type Ptr = bigint;
type NativeFn = (...args: unknown[]) => number;
interface Koffi {
  load(path: string): { func(definition: string): NativeFn };
  alloc(type: string, length: number): Ptr;
  free(pointer: Ptr): void;
  view(pointer: Ptr, length: number): ArrayBuffer;
}

const isError = (major: number): boolean => (major & 0xffff0000) !== 0;
const HOSTBASED = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x01, 0x04];
const KRB5 = [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02];

export interface NameAttribute {
  name: string;
  authenticated: boolean;
  complete: boolean;
  value: Uint8Array;
}

export interface AcceptedTicket {
  /** gss_display_name of the initiator. */
  peer: string;
  /** Every attribute of the initiator's name with its first value. */
  attributes: NameAttribute[];
}

export class GssError extends Error {
  constructor(
    readonly call: string,
    readonly major: number,
    readonly minor: number,
    text: string,
  ) {
    super(`${call}: ${text}`);
  }
}

/** An AP-REQ (RFC 2743 framed krb5 token) for `host@<dnsName>` from python3-gssapi, with `env` (KRB5CCNAME, KRB5_CONFIG). */
export async function initiatorToken(dnsName: string, env: Record<string, string>): Promise<Uint8Array> {
  const script = [
    'import base64, sys, gssapi',
    "name = gssapi.Name('host@' + sys.argv[1], gssapi.NameType.hostbased_service)",
    'flags = [gssapi.RequirementFlag.mutual_authentication, gssapi.RequirementFlag.confidentiality, gssapi.RequirementFlag.integrity]',
    "ctx = gssapi.SecurityContext(name=name, usage='initiate', mech=gssapi.MechType.kerberos, flags=flags)",
    'sys.stdout.write(base64.b64encode(ctx.step()).decode())',
  ].join('\n');
  const { stdout } = await run('/usr/bin/python3', ['-c', script, dnsName], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    timeout: 30_000,
  });
  return new Uint8Array(Buffer.from(stdout.trim(), 'base64'));
}

/**
 * Accepts `token` for `host@<dnsName>` with the keys of `keytab` (FILE:/path) and returns the peer and its name's
 * attributes. Throws GssError when the library refuses the token (wrong service, wrong key, expired, ...).
 */
export function acceptAndReadPac(keytab: string, dnsName: string, token: Uint8Array): AcceptedTicket {
  const koffi = createRequire(import.meta.url)('koffi') as Koffi;
  const lib = koffi.load('libgssapi_krb5.so.2');
  const f = (d: string): NativeFn => lib.func(d);
  const importName = f('uint32 gss_import_name(void *minor, void *buf, void *type, void *out)');
  const acquireCredFrom = f(
    'uint32 gss_acquire_cred_from(void *minor, void *name, uint32 t, void *mechs, int usage, void *store, void *cred, void *amechs, void *trec)',
  );
  const accept = f(
    'uint32 gss_accept_sec_context(void *minor, void *ctx, void *cred, void *tok, void *cb, void *src, void *mech, void *out, void *flags, void *trec, void *deleg)',
  );
  const displayName = f('uint32 gss_display_name(void *minor, void *name, void *buf, void *type)');
  const displayStatus = f(
    'uint32 gss_display_status(void *minor, uint32 status, int type, void *mech, void *mctx, void *buf)',
  );
  const inquireName = f('uint32 gss_inquire_name(void *minor, void *name, void *is_mn, void *mn_mech, void *attrs)');
  const getNameAttribute = f(
    'uint32 gss_get_name_attribute(void *minor, void *name, void *attr, void *authenticated, void *complete, void *value, void *display, void *more)',
  );
  const releaseBuffer = f('uint32 gss_release_buffer(void *minor, void *buf)');
  const releaseBufferSet = f('uint32 gss_release_buffer_set(void *minor, void *set)');
  const releaseName = f('uint32 gss_release_name(void *minor, void *name)');
  const releaseCred = f('uint32 gss_release_cred(void *minor, void *cred)');
  const deleteContext = f('uint32 gss_delete_sec_context(void *minor, void *ctx, void *out)');

  const allocations: Ptr[] = [];
  const alloc = (size: number): { p: Ptr; v: DataView; b: Uint8Array } => {
    const p = koffi.alloc('uint8', size);
    allocations.push(p);
    const ab = koffi.view(p, size);
    new Uint8Array(ab).fill(0);
    return { p, v: new DataView(ab), b: new Uint8Array(ab) };
  };
  const bytesAt = (p: Ptr, n: number): Uint8Array =>
    n === 0 || p === 0n ? new Uint8Array(0) : new Uint8Array(koffi.view(p, n)).slice();
  /** A gss_buffer_desc holding a copy of `data`. */
  const bufferDesc = (data: Uint8Array): Ptr => {
    const desc = alloc(16);
    const body = alloc(Math.max(1, data.length));
    body.b.set(data);
    desc.v.setBigUint64(0, BigInt(data.length), true);
    desc.v.setBigUint64(8, body.p, true);
    return desc.p;
  };
  const oidDesc = (bytes: number[]): Ptr => {
    const desc = alloc(16);
    const body = alloc(bytes.length);
    body.b.set(bytes);
    desc.v.setUint32(0, bytes.length, true);
    desc.v.setBigUint64(8, body.p, true);
    return desc.p;
  };
  const minor = alloc(8);
  const status = (major: number, code: number): string => {
    const parts: string[] = [];
    for (const [value, type] of [
      [major, 1],
      [code, 2],
    ] as const) {
      if (value === 0) continue;
      const mctx = alloc(8);
      const out = alloc(16);
      if (isError(displayStatus(minor.p, value, type, null, mctx.p, out.p))) continue;
      parts.push(new TextDecoder().decode(bytesAt(out.v.getBigUint64(8, true), Number(out.v.getBigUint64(0, true)))));
      releaseBuffer(minor.p, out.p);
    }
    return parts.join('; ');
  };
  const check = (call: string, major: number): void => {
    if (isError(major)) {
      const code = minor.v.getUint32(0, true);
      throw new GssError(call, major, code, status(major, code));
    }
  };

  const nameOut = alloc(8);
  const credOut = alloc(8);
  const ctx = alloc(8);
  const srcName = alloc(8);
  const outToken = alloc(16);
  try {
    check(
      'gss_import_name',
      importName(minor.p, bufferDesc(new TextEncoder().encode(`host@${dnsName}`)), oidDesc(HOSTBASED), nameOut.p),
    );
    // Credential store { "keytab": keytab }, mechanism set { krb5 }.
    const key = alloc(16);
    key.b.set(new TextEncoder().encode('keytab\0'));
    const value = alloc(keytab.length + 1);
    value.b.set(new TextEncoder().encode(keytab));
    const element = alloc(16);
    element.v.setBigUint64(0, key.p, true);
    element.v.setBigUint64(8, value.p, true);
    const store = alloc(16);
    store.v.setUint32(0, 1, true);
    store.v.setBigUint64(8, element.p, true);
    const mechSet = alloc(16);
    mechSet.v.setBigUint64(0, 1n, true);
    mechSet.v.setBigUint64(8, oidDesc(KRB5), true);
    check(
      'gss_acquire_cred_from',
      acquireCredFrom(minor.p, nameOut.v.getBigUint64(0, true), 0, mechSet.p, 2, store.p, credOut.p, null, null),
    );
    const flags = alloc(8);
    check(
      'gss_accept_sec_context',
      accept(
        minor.p,
        ctx.p,
        credOut.v.getBigUint64(0, true),
        bufferDesc(token),
        null,
        srcName.p,
        null,
        outToken.p,
        flags.p,
        null,
        null,
      ),
    );
    const name = srcName.v.getBigUint64(0, true);
    const shown = alloc(16);
    check('gss_display_name', displayName(minor.p, name, shown.p, null));
    const peer = new TextDecoder().decode(
      bytesAt(shown.v.getBigUint64(8, true), Number(shown.v.getBigUint64(0, true))),
    );
    releaseBuffer(minor.p, shown.p);

    const attributes: NameAttribute[] = [];
    const setOut = alloc(8);
    const isMn = alloc(8);
    check('gss_inquire_name', inquireName(minor.p, name, isMn.p, null, setOut.p));
    const set = setOut.v.getBigUint64(0, true);
    const names: string[] = [];
    if (set !== 0n) {
      const sv = new DataView(koffi.view(set, 16));
      const count = Number(sv.getBigUint64(0, true));
      const elements = sv.getBigUint64(8, true);
      for (let i = 0; i < count; i++) {
        const ev = new DataView(koffi.view(elements + BigInt(16 * i), 16));
        names.push(new TextDecoder().decode(bytesAt(ev.getBigUint64(8, true), Number(ev.getBigUint64(0, true)))));
      }
      releaseBufferSet(minor.p, setOut.p);
    }
    for (const attr of names) {
      const auth = alloc(4);
      const complete = alloc(4);
      const val = alloc(16);
      const disp = alloc(16);
      const more = alloc(4);
      more.v.setInt32(0, -1, true);
      const major = getNameAttribute(
        minor.p,
        name,
        bufferDesc(new TextEncoder().encode(attr)),
        auth.p,
        complete.p,
        val.p,
        disp.p,
        more.p,
      );
      if (isError(major)) continue;
      attributes.push({
        name: attr,
        authenticated: auth.v.getInt32(0, true) !== 0,
        complete: complete.v.getInt32(0, true) !== 0,
        value: bytesAt(val.v.getBigUint64(8, true), Number(val.v.getBigUint64(0, true))),
      });
      releaseBuffer(minor.p, val.p);
      releaseBuffer(minor.p, disp.p);
    }
    return { peer, attributes };
  } finally {
    if (outToken.v.getBigUint64(8, true) !== 0n) releaseBuffer(minor.p, outToken.p);
    if (srcName.v.getBigUint64(0, true) !== 0n) releaseName(minor.p, srcName.p);
    if (ctx.v.getBigUint64(0, true) !== 0n) deleteContext(minor.p, ctx.p, null);
    if (credOut.v.getBigUint64(0, true) !== 0n) releaseCred(minor.p, credOut.p);
    if (nameOut.v.getBigUint64(0, true) !== 0n) releaseName(minor.p, nameOut.p);
    for (const p of allocations) koffi.free(p);
  }
}
