/** What a BridgeConnection is given by the server that accepted it (connection.ts describes their use). */
import type { ByteBudget, Logger } from '#idb';
import type { ServerDecoderOptions, FramingFaultName } from './framing/index.ts';
import type { BridgeObserver, Dispatch, StreamUpgradeAcceptor } from './streams.ts';

export interface ConnectionOptions {
  connectionId: string;
  /** The client's address, for the upgrade (throttling failed logons) and logs. */
  remoteAddress: string;
  /**
   * Transport security (Windows: NegotiateStream, application/negotiate): the client must upgrade before
   * PreambleEnd, and the identity it authenticates as is the caller. Without it (security mode None) every caller
   * is anonymous.
   */
  upgrade?: StreamUpgradeAcceptor;
  dispatch: Dispatch<object>;
  /**
   * A via served apart from the endpoint, without the upgrade and anonymously, by its own dispatch: WS-MetadataExchange's
   * `/mex` (mex.ts), as WCF serves a mexTcpBinding endpoint.
   */
  metadata?: { accepts: (via: string) => boolean; dispatch: Dispatch<object> };
  decoder: ServerDecoderOptions;
  initTimeoutMs: number;
  idleTimeoutMs: number;
  /** How long one envelope may take to arrive, from its size to its last byte (budget wait included). */
  messageTimeoutMs: number;
  /** How long the stream may go without taking the bytes written to it. */
  sendTimeoutMs: number;
  /** The bytes of partly received envelopes, shared by the server's connections. */
  budget: ByteBudget;
  /** Calls received and not yet answered beyond which reading pauses. */
  maxCallsAhead: number;
  /** Unsent bytes beyond which no call is dispatched and nothing is read. */
  maxUnsentBytes: number;
  /** Answer this framing fault at PreambleEnd instead of serving (ServerTooBusy when over the connection cap). */
  refuseWith?: FramingFaultName;
  logger: Logger;
  /** Handshakes and refusals, for metrics. */
  observer: BridgeObserver;
  /** Called once when the connection is over; `clean` as described above. */
  onClosed: (clean: boolean) => void;
}
