/**
 * The GSSAPI backend (GssapiBackend), the second SecurityBackend beside ../ntlm/acceptor.ts, over the system MIT
 * GSSAPI (ffi.ts). It offers Kerberos for domain users with a keytab (KRB5_KTNAME; kerberos.ts) and, with
 * BRIDGE_NTLM_BACKEND=gssapi, NTLM through gss-ntlmssp over the BRIDGE_NTLM_USERS file (ntlm.ts): Kerberos listed
 * first, and SPNEGO serves the client's preference. SPNEGO stays in ../spnego.ts and NNS framing in ../stream.ts: the
 * contexts see the raw mechanism tokens, and protect the data frames with gss_wrap / gss_unwrap.
 *
 * Plugging it in (once, at start; it throws ConfigError when it cannot accept anything):
 *
 *   const gssapi = new GssapiBackend({ keytab: config.keytab, ntlmUsers: config.ntlmUsersFile, dnsIdentity });
 *   backends.push(gssapi);            // Kerberos when keytab is given, NTLM when ntlmUsers is
 *   ... on shutdown: gssapi.close();  // releases the acceptor credentials
 *
 * or `gssapiBackendFor(config)`, from the settings ../../config.ts read.
 *
 * Acceptor credentials are acquired once, at start, for the host-based name `<service>@<dnsIdentity>` (`host` by
 * default), each from a credential store named explicitly (gss_acquire_cred_from), so that the process environment
 * cannot point the library at other secrets:
 * - Kerberos: the keytab, a secret file (../secret-file.ts: it is password-equivalent). The library accepts tickets
 *   for that service only, in any realm the keytab holds it in; a keytab without a key for the name is refused at
 *   start (MIT checks that when acquiring). The key itself is read at each accept, so a rotated keytab is picked up
 *   without a restart. The replay cache is MIT's (`KRB5RCACHEDIR`/`KRB5RCACHENAME`, or `replayCache`); the bridge
 *   refuses to start with it switched off (checkReplayCache, ../../config.ts).
 * - NTLM: the users file under gss-ntlmssp's store key `ntlmssp_keyfile`: a server credential carries it into every
 *   gss_accept_sec_context, which then reads the accounts from it and from nowhere else. There is no
 *   `ntlm_user_file` key: 1.2.0 ignores unknown keys, and with none it knows falls back to `NTLM_USER_FILE` from the
 *   process environment, then to winbind (the Debian build links libwbclient). The name is mandatory: a credential
 *   store without a name segfaults 1.2.0 (reproduced; `get_creds_from_store` with a null name). The bridge reads the
 *   file at start too, for its checks and for the identities (loadGssNtlmUsers).
 *
 * Not done here: delegation (delegated credentials are not requested and are released by the library), channel
 * bindings (raw TCP has none), NTLM accounts from winbind (the credential store keeps gss-ntlmssp to the file).
 */

import { resolve } from 'node:path';
import { ConfigError } from '#idb';
import { checkReplayCache, type BridgeConfig } from '../../config.ts';
import { LogonThrottle, NTLM_LIMITS } from '../ntlm/index.ts';
import { checkSecretFile } from '../secret-file.ts';
import { NegotiateError, OID, type AcceptorInfo, type SecurityBackend } from '../security-context.ts';
import { GSS_C_ACCEPT, isError, loadGssapi, NativeBlock, statusText, type GssLibrary, type Ptr } from './ffi.ts';
import { GssapiKerberosContext } from './kerberos.ts';
import { GssapiNtlmContext, loadGssNtlmUsers, type NtlmGateSettings } from './ntlm.ts';

/** The path of a file keytab (`FILE:/path`, `WRFILE:/path` or `/path`) that is a secret file; ConfigError otherwise. */
export function checkKeytab(keytab: string): string {
  const match = /^(?:(FILE|WRFILE):)?(\/.*)$/.exec(keytab);
  if (!match) throw new ConfigError(`KRB5_KTNAME: "${keytab}" is not a file keytab (FILE:/absolute/path)`);
  const path = match[2]!;
  checkSecretFile(path, 'KRB5_KTNAME', "the service's keys");
  return path;
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
  /** NTLM: failed logons per claimed user and per source address. Default: ../ntlm/throttle.ts's limits. */
  throttle?: LogonThrottle;
  /** NTLM: how long a CHALLENGE stays answerable. Default 60 s (NTLM_LIMITS). */
  challengeLifetimeMs?: number;
  /** For tests: the clock. */
  now?: () => number;
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
    if (!/^[A-Za-z0-9.-]+$/.test(options.dnsIdentity))
      throw new ConfigError(`BRIDGE_DNS_IDENTITY must be a DNS name, not "${options.dnsIdentity}"`);
    if (options.keytab === undefined && options.ntlmUsers === undefined) {
      throw new ConfigError(
        'The GSSAPI backend needs KRB5_KTNAME (Kerberos) and/or BRIDGE_NTLM_USERS with BRIDGE_NTLM_BACKEND=gssapi (NTLM)',
      );
    }
    const service = options.service ?? 'host';
    this.acceptorName = `${service}@${options.dnsIdentity}`;
    this.requireMutualAuth = options.requireMutualAuth ?? true;
    if (options.keytab !== undefined) {
      this.keytabPath = checkKeytab(options.keytab);
      checkReplayCache(options.replayCache);
    }
    if (options.ntlmUsers !== undefined) {
      const now = options.now ?? Date.now;
      this.ntlm = {
        accounts: loadGssNtlmUsers(options.ntlmUsers),
        targetNames: options.targetNames ?? [`${service}/${options.dnsIdentity}`],
        throttle: options.throttle ?? new LogonThrottle({ now }),
        challengeLifetimeMs: options.challengeLifetimeMs ?? NTLM_LIMITS.challengeLifetimeMs,
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
        this.ntlmCred = this.acquire(
          this.lib.oids.ntlmSet,
          [['ntlmssp_keyfile', resolve(options.ntlmUsers)]],
          'NTLM (gss-ntlmssp)',
          'for BRIDGE_NTLM_USERS',
        );
      } catch (error) {
        this.releaseCreds();
        throw error;
      }
    }
    this.mechanisms = [
      ...(this.kerberosCred !== 0n ? [OID.kerberosMicrosoft, OID.kerberos] : []),
      ...(this.ntlmCred !== 0n ? [OID.ntlm] : []),
    ];
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
      if (isError(status))
        throw new ConfigError(
          `${what}: cannot import the name ${this.acceptorName}: ${statusText(lib, status, block.u32(0))}`,
        );
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
        const hint =
          mechs === lib.oids.ntlmSet
            ? ' (is gss-ntlmssp installed? MIT loads it through /etc/gss/mech.d/, Debian package gss-ntlmssp)'
            : '';
        throw new ConfigError(
          `${what}: no acceptor credential for ${this.acceptorName} ${where}: ${statusText(lib, status, block.u32(0))}${hint}`,
        );
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

/** The settings of a BridgeConfig that make the GSSAPI backend. */
export type GssapiSettings = Pick<BridgeConfig, 'keytab' | 'ntlmUsersFile' | 'ntlmBackend'> & {
  endpoint: Pick<BridgeConfig['endpoint'], 'dnsIdentity'>;
};

/**
 * The GSSAPI backend the settings call for: Kerberos with a keytab, NTLM through gss-ntlmssp with
 * BRIDGE_NTLM_BACKEND=gssapi and a users file; undefined when neither is configured.
 */
export function gssapiBackendFor(
  config: GssapiSettings,
  options: Partial<GssapiBackendOptions> = {},
): GssapiBackend | undefined {
  const ntlmUsers = config.ntlmBackend === 'gssapi' ? config.ntlmUsersFile : undefined;
  if (config.keytab === undefined && ntlmUsers === undefined) return undefined;
  return new GssapiBackend({ keytab: config.keytab, ntlmUsers, dnsIdentity: config.endpoint.dnsIdentity, ...options });
}
