/**
 * What the Kerberos and the NTLM contexts of the GSSAPI backend share (GssapiContext): gss_accept_sec_context off the
 * event loop, the per-message calls, and the release of the library's context.
 *
 * - gss_accept_sec_context may read the keytab or the users file and write the replay cache: it runs on koffi's
 *   worker threads (`.async`), never on the event loop. gss_wrap / gss_unwrap / gss_get_mic / gss_verify_mic are
 *   computations on keys in memory: synchronous, so the frames of a connection stay in order. A context disposed
 *   while its step runs is released when the step returns (native memory is never freed under a running call).
 * - Every name and context the library hands out is released (gss_release_name, gss_delete_sec_context); a context
 *   its owner forgets to dispose is deleted when it is garbage-collected (FinalizationRegistry). A protection failure
 *   releases the context at once: the connection is dropped, later calls throw.
 * - A refusal is a NegotiateError (the client sees logon denied) with the library's own message as detail for the
 *   log; its reason is the mechanism's (kerberos.ts: `gssapi.replay`, `gssapi.clock-skew`, …; ntlm.ts:
 *   `gssapi.bad-proof`, `gssapi.bad-mic` and the gate's `ntlm.*` reasons), `gssapi.refused` for anything else.
 */

import {
  IntegrityError,
  NegotiateError,
  OID,
  type AcceptorInfo,
  type MechanismContext,
  type MicOptions,
  type StepResult,
} from '../security-context.ts';
import {
  deleteContext,
  GSS_S_CONTINUE_NEEDED,
  isError,
  NativeBlock,
  OID_BYTES,
  statusText,
  takeBuffer,
  type GssLibrary,
  type Ptr,
} from './ffi.ts';

type ContextState = 'accepting' | 'done' | 'failed' | 'disposed';

/** A safety net: a context dropped without dispose() (a bug in its owner) still has its keys released, on GC. */
const orphans = new FinalizationRegistry<{ lib: GssLibrary; handle: { context: Ptr }; onRelease: () => void }>(
  ({ lib, handle, onRelease }) => {
    deleteContext(lib, handle);
    onRelease();
  },
);

/** What one gss_accept_sec_context call returned, taken out of native memory. */
export interface Accepted {
  major: number;
  output: Uint8Array;
  /** gss_display_name of src_name, when the call succeeded and gave one. */
  peer: string | undefined;
  /** What `peerSidsOf` read from src_name on the step that completed the context. */
  sids: readonly string[];
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
export abstract class GssapiContext implements MechanismContext {
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
  protected sids: readonly string[] = [];

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

  get peerSids(): readonly string[] {
    return this.established ? this.sids : [];
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

  /**
   * The peer's SIDs, read from the library's name of the peer (`name`, alive only during this call) on the step that
   * completes the context; throws NegotiateError to refuse. None by default.
   */
  protected peerSidsOf(_name: Ptr): readonly string[] {
    return [];
  }

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
      throw new NegotiateError(
        'gssapi.refused',
        `the call failed: ${callError instanceof Error ? callError.message : String(callError)}`,
      );
    }
    const minor = block.u32(0); // before any release call reuses the minor status word
    this.handle.context = block.ptr(8);
    const output = takeBuffer(lib, block, 48, 0);
    const srcName = block.ptr(32);
    let peer: string | undefined;
    let sids: readonly string[] = [];
    if (srcName !== 0n) {
      try {
        if (!isError(major)) peer = this.displayName(srcName);
        if (!isError(major) && (major & GSS_S_CONTINUE_NEEDED) === 0 && this.state !== 'disposed')
          sids = this.peerSidsOf(srcName);
      } finally {
        block.setPtr(32, srcName);
        lib.releaseName(block.at(0), block.at(32));
      }
    }
    if (this.state === 'disposed')
      throw new NegotiateError('gssapi.disposed', 'the connection closed during the handshake');
    if (isError(major)) throw this.refusal(major, minor);
    return this.finish({ major, output, peer, sids, mechanism: this.mechanismOf(block.ptr(40)), flags: block.u32(64) });
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
    const same = (expected: readonly number[]): boolean =>
      expected.length === bytes.length && expected.every((b, i) => bytes[i] === b);
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
    if (this.state !== 'done' || this.handle.context === 0n)
      throw new IntegrityError(
        'Broken',
        `the ${this.label} context is ${this.state === 'done' ? 'released' : 'not established'}`,
      );
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
