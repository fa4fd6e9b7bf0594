/**
 * The server side of NegotiateStream (MS-NNS) for the bridge: after the framing UpgradeRequest
 * (`application/negotiate`) and our UpgradeResponse, it runs the handshake over the raw connection, then turns the
 * data frames into a plaintext byte stream for the NMF decoder and wraps what the connection writes.
 *
 * The server offers it to its connections as a StreamUpgradeAcceptor (`negotiateUpgrade`, streams.ts): on the
 * `upgradeRequest` event the connection writes the UpgradeResponse and hands its raw stream to `accept`, then feeds
 * it the socket's bytes (the first call with the event's `rest`) and tells it when the socket closed.
 *
 * `raw` is the socket's ByteStream; `plaintext` (handed to `established`) is a ByteStream whose writes go out as
 * wrapped data frames, whose end()/destroy() end/destroy the socket and whose pause()/resume() pause the socket. Its
 * write contract is the socket's: a write's result, `unsent` and drain are the transport's (sealed bytes waiting).
 *
 * Decisions:
 * - Every refused handshake (bad credentials, weak flags, malformed tokens, framing errors, too many rounds, a
 *   protection level below the configured one) gets the same HandshakeError frame with SEC_E_LOGON_DENIED and the
 *   socket is ended; the reason goes to the log only. A client's own HandshakeError just ends the socket.
 * - The protection level is negotiated through the context's flags, as .NET's NegotiateStream does it: EncryptAndSign
 *   requires a context with confidentiality; Sign accepts a context with integrity, and one with confidentiality too
 *   (a client may offer more than asked).
 * - In the data phase any frame that does not unwrap (bad signature, sequence number out of order, bad size) destroys
 *   the socket at once: no answer, nothing more written, nothing more read.
 * - The handshake is capped: tokens of at most `maxHandshakeTokenBytes` (48 000 by default, Windows' MaxTokenSize)
 *   and at most `maxHandshakeRounds` client tokens (4; NTLM under SPNEGO takes 2, 3 when the client had preferred
 *   another mechanism). The overall time is the connection's: its init time-out runs until PreambleEnd.
 * - A step runs asynchronously; bytes arriving meanwhile are buffered (bounded by NnsDecoder) and read afterwards, so
 *   frames are always handled in order.
 * - Writes: at most 63 KiB of plaintext per frame (what .NET writes), and never a payload over 0xFC30 bytes.
 */

import type { Logger } from '#idb';
import { NEGOTIATE_UPGRADE } from '../framing/index.ts';
import type { ByteStream, StreamUpgradeAcceptor } from '../streams.ts';
import {
  dataFrame,
  errorFrame,
  errorStatus,
  HandshakeId,
  handshakeFrame,
  MAX_DATA_SEND,
  MAX_HANDSHAKE_PAYLOAD,
  NnsDecoder,
  NnsError,
  type NnsFrame,
} from './nns.ts';
import { ANY_NTLM, type NtlmPolicy, ntlmAllowed } from './ntlm-policy.ts';
import { createAcceptor, SpnegoAcceptor } from './spnego.ts';
import {
  IntegrityError,
  mechanismName,
  NegotiateError,
  OID,
  type ProtectionLevel,
  type SecurityBackend,
  type SecurityContext,
} from './security-context.ts';

export interface NegotiateStreamOptions {
  /** The acceptor backends, in preference order (the first offering a mechanism serves it). */
  backends: readonly SecurityBackend[];
  /** What the client must negotiate at least (BRIDGE_PROTECTION_LEVEL). */
  protectionLevel: ProtectionLevel;
  /** The client's address (for throttling failed logons, and logs). */
  remoteAddress: string;
  connectionId?: string;
  logger?: Logger;
  /** Largest handshake token accepted. Default 48 000. */
  maxHandshakeTokenBytes?: number;
  /** Most handshake tokens accepted from the client. Default 4. */
  maxHandshakeRounds?: number;
  /** Who may log on with NTLM (ntlm-policy.ts). Default: every account the backends accept. */
  ntlmPolicy?: NtlmPolicy;
}

/** Who authenticated, and how. */
export interface NegotiatedPeer {
  /** Normalized: `DOMAIN\user` or `user@REALM`. */
  name: string;
  /** The user's SID and enabled group SIDs, when the domain gave them (SecurityContext.peerSids); else empty. */
  sids: readonly string[];
  /** The mechanism's OID. */
  mechanism: string;
  /** `NTLM` or `Kerberos`. */
  mechanismName: string;
  /** The client spoke SPNEGO (rather than a raw mechanism token). */
  spnego: boolean;
  /** What the context provides: EncryptAndSign when sealing was negotiated. */
  protectionLevel: ProtectionLevel;
}

export interface NegotiateStreamEvents {
  /** The handshake succeeded. `plaintext` writes data frames; plaintext from the client arrives through `data`. */
  established(peer: NegotiatedPeer, plaintext: ByteStream): void;
  /** Plaintext unwrapped from one data frame (never empty). */
  data(plain: Uint8Array): void;
  /**
   * The handshake was refused (the error frame was sent and the socket ended) or the data phase broke (the socket
   * was destroyed). Not called for an ordinary close; nothing is written afterwards.
   */
  failed(error: NegotiateError | IntegrityError | NnsError, mechanismName?: string): void;
}

export type NegotiateStreamState = 'handshake' | 'established' | 'failed' | 'closed';

/** NegotiateStream as the stream upgrade of `application/negotiate`, for every connection of a server. */
export function negotiateUpgrade(
  options: Omit<NegotiateStreamOptions, 'remoteAddress' | 'connectionId' | 'logger'>,
): StreamUpgradeAcceptor {
  return {
    contentType: NEGOTIATE_UPGRADE,
    accept: (raw, site, events) => new NegotiateStreamServer(raw, { ...options, ...site }, events),
  };
}

/** At most this much plaintext per data frame, as .NET's NegotiateStream writes. */
const MAX_PLAINTEXT_PER_FRAME = 63 * 1024;

export class NegotiateStreamServer {
  private readonly decoder: NnsDecoder;
  private context: SecurityContext | undefined;
  private phase: NegotiateStreamState = 'handshake';
  private stepping = false;
  private rounds = 0;
  private readonly maxRounds: number;
  private spnego = false;

  constructor(
    private readonly transport: ByteStream,
    private readonly options: NegotiateStreamOptions,
    private readonly events: NegotiateStreamEvents,
  ) {
    this.decoder = new NnsDecoder({ maxHandshakePayload: options.maxHandshakeTokenBytes ?? 48_000 });
    this.maxRounds = options.maxHandshakeRounds ?? 4;
  }

  get state(): NegotiateStreamState {
    return this.phase;
  }

  /** Bytes from the socket (the first call with the UpgradeRequest event's `rest`). */
  receive(chunk: Uint8Array): void {
    if (this.phase === 'failed' || this.phase === 'closed') return;
    try {
      this.decoder.push(chunk);
    } catch (error) {
      this.abort(error);
      return;
    }
    this.pump();
  }

  /** The socket closed (or reset): forget the keys. */
  transportClosed(): void {
    if (this.phase === 'handshake' || this.phase === 'established') this.phase = 'closed';
    this.context?.dispose();
  }

  private pump(): void {
    while (!this.stepping && (this.phase === 'handshake' || this.phase === 'established')) {
      let frame: NnsFrame | undefined;
      try {
        frame = this.decoder.next();
      } catch (error) {
        this.abort(error);
        return;
      }
      if (frame === undefined) return;
      if (frame.kind === 'handshake') this.handshake(frame.id, frame.payload);
      else this.dataFrame(frame.payload);
    }
  }

  private handshake(id: number, token: Uint8Array): void {
    if (id === HandshakeId.Error) {
      const status = errorStatus(token);
      this.options.logger?.log('info', 'negotiate: the client gave up', {
        remoteAddress: this.options.remoteAddress,
        status: status?.littleEndian ?? status?.bigEndian,
      });
      this.phase = 'failed';
      this.context?.dispose();
      this.transport.end();
      this.events.failed(new NegotiateError('client.error', 'the client sent HandshakeError'));
      return;
    }
    if (++this.rounds > this.maxRounds) {
      this.refuse(new NegotiateError('nns.rounds', `more than ${this.maxRounds} handshake tokens`));
      return;
    }
    const clientDone = id === HandshakeId.Done;
    try {
      if (this.context === undefined) {
        this.context = createAcceptor(token, this.options.backends, {
          remoteAddress: this.options.remoteAddress,
          protectionLevel: this.options.protectionLevel,
          connectionId: this.options.connectionId,
        });
        this.spnego = this.context instanceof SpnegoAcceptor;
      }
    } catch (error) {
      this.refuse(error);
      return;
    }
    this.stepping = true;
    this.context.step(token).then(
      (result) => {
        this.stepping = false;
        if (this.phase !== 'handshake') return;
        if (result.done) this.complete(result.token);
        else if (clientDone)
          this.refuse(
            new NegotiateError(
              'nns.client-done-early',
              'the client finished while the server context was not established',
            ),
          );
        else if (result.token === undefined || result.token.length === 0)
          this.refuse(new NegotiateError('nns.no-token', 'the context continues without a token'));
        else if (result.token.length > MAX_HANDSHAKE_PAYLOAD)
          this.refuse(new NegotiateError('nns.token-too-large', `a ${result.token.length}-byte token`));
        else this.transport.write(handshakeFrame(HandshakeId.InProgress, result.token));
        this.pump();
      },
      (error: unknown) => {
        this.stepping = false;
        if (this.phase === 'handshake') this.refuse(error);
      },
    );
  }

  private complete(token: Uint8Array | undefined): void {
    const context = this.context!;
    const achieved: ProtectionLevel | undefined = context.confidentiality
      ? 'EncryptAndSign'
      : context.integrity
        ? 'Sign'
        : undefined;
    if (
      achieved === undefined ||
      (this.options.protectionLevel === 'EncryptAndSign' && achieved !== 'EncryptAndSign')
    ) {
      this.refuse(
        new NegotiateError(
          'nns.protection-level',
          `the context provides ${achieved ?? 'no protection'}, ${this.options.protectionLevel} is required`,
        ),
      );
      return;
    }
    const name = context.peerName;
    if (name === undefined || name === '') {
      this.refuse(new NegotiateError('nns.no-peer', 'the context names no peer'));
      return;
    }
    if (context.mechanism === OID.ntlm && !ntlmAllowed(this.options.ntlmPolicy ?? ANY_NTLM, name)) {
      this.refuse(
        new NegotiateError(
          'nns.ntlm-refused',
          `NTLM is not allowed for ${name} (BRIDGE_KERBEROS_ONLY, BRIDGE_NTLM_ACCOUNTS)`,
        ),
      );
      return;
    }
    if (token !== undefined && token.length > MAX_HANDSHAKE_PAYLOAD) {
      this.refuse(new NegotiateError('nns.token-too-large', `a ${token.length}-byte token`));
      return;
    }
    // The final token (possibly empty) travels as HandshakeDone; data frames follow.
    this.transport.write(handshakeFrame(HandshakeId.Done, token ?? new Uint8Array(0)));
    this.decoder.startData();
    this.phase = 'established';
    const mechanism = context.mechanism ?? OID.spnego;
    const peer: NegotiatedPeer = {
      name,
      sids: context.peerSids ?? [],
      mechanism,
      mechanismName: mechanismName(mechanism),
      spnego: this.spnego,
      protectionLevel: achieved,
    };
    this.options.logger?.log('info', 'negotiate: authenticated', {
      peer: name,
      mechanism: peer.mechanismName,
      spnego: peer.spnego,
      protection: achieved,
      remoteAddress: this.options.remoteAddress,
    });
    const transport = this.transport;
    this.events.established(peer, {
      write: (bytes) => this.send(bytes),
      // Frames are written through at once: what waits is in the transport, sealed.
      get unsent() {
        return transport.unsent;
      },
      onDrain: (listener) => transport.onDrain(listener),
      end: () => this.close(false),
      destroy: () => this.close(true),
      pause: () => this.transport.pause(),
      resume: () => this.transport.resume(),
    });
  }

  private dataFrame(payload: Uint8Array): void {
    let plain: Uint8Array;
    try {
      plain = this.context!.unwrap(payload);
    } catch (error) {
      this.abort(error);
      return;
    }
    if (plain.length > 0) this.events.data(plain);
  }

  /** Wraps plaintext into data frames; false when the transport holds more than its buffer afterwards. */
  private send(bytes: Uint8Array): boolean {
    if (this.phase !== 'established') return true;
    const context = this.context!;
    const most = Math.min(MAX_PLAINTEXT_PER_FRAME, MAX_DATA_SEND - context.wrapOverhead);
    let fits = true;
    for (let at = 0; at < bytes.length && this.phase === 'established'; at += most) {
      let payload: Uint8Array;
      try {
        payload = context.wrap(bytes.subarray(at, at + most));
      } catch (error) {
        this.abort(error);
        return true;
      }
      fits = this.transport.write(dataFrame(payload));
    }
    return fits;
  }

  private close(destroy: boolean): void {
    if (this.phase !== 'established' && this.phase !== 'handshake') return;
    this.phase = 'closed';
    this.context?.dispose();
    if (destroy) this.transport.destroy();
    else this.transport.end();
  }

  /** A refused handshake: the logon-denied frame, then the end. */
  private refuse(error: unknown): void {
    if (this.phase !== 'handshake') return;
    this.phase = 'failed';
    const failure = asFailure(error);
    this.options.logger?.log('warn', 'negotiate: logon refused', {
      reason: reasonOf(failure),
      detail: failure instanceof NegotiateError ? failure.detail : failure.message,
      remoteAddress: this.options.remoteAddress,
      connectionId: this.options.connectionId,
    });
    const mechanism = this.context?.mechanism;
    this.context?.dispose();
    this.transport.write(errorFrame());
    this.transport.end();
    this.events.failed(failure, mechanism === undefined ? undefined : mechanismName(mechanism));
  }

  /** Bytes that cannot be trusted: during the handshake a refusal, afterwards the socket is destroyed. */
  private abort(error: unknown): void {
    if (this.phase === 'handshake') {
      this.refuse(error);
      return;
    }
    if (this.phase !== 'established') return;
    this.phase = 'failed';
    const failure = asFailure(error);
    this.options.logger?.log('warn', 'negotiate: connection dropped', {
      reason: reasonOf(failure),
      detail: failure.message,
      remoteAddress: this.options.remoteAddress,
      connectionId: this.options.connectionId,
    });
    this.context?.dispose();
    this.transport.destroy();
    this.events.failed(failure);
  }
}

function reasonOf(failure: NegotiateError | IntegrityError | NnsError): string {
  if (failure instanceof IntegrityError) return `integrity.${failure.kind}`;
  if (failure instanceof NnsError) return `nns.${failure.code}`;
  return failure.reason;
}

function asFailure(error: unknown): NegotiateError | IntegrityError | NnsError {
  if (error instanceof NegotiateError || error instanceof IntegrityError || error instanceof NnsError) return error;
  return new NegotiateError('internal', error instanceof Error ? error.message : String(error));
}
