/**
 * The types the bridge's layers meet on, in the manner of CoreWCF's transport: a connection reads bytes from a
 * ByteStream, may hand it to a stream upgrade (Windows security) that gives back a ByteStream of plaintext, and hands
 * each decoded message to a Dispatch. Nothing here knows of sockets, framing records or security mechanisms.
 */
import type { Caller, Logger } from '#idb';
import type { SessionStrings, XmlDocument } from './binary-xml/index.ts';

/**
 * Where a connection's bytes go: the socket, or an upgraded stream over it. Writes are never refused: a stream takes
 * every byte in order and tells whether they fit its buffer; the writer decides how much it lets wait (connection.ts
 * stops reading and dispatching while `unsent` is over its limit, and resumes on drain).
 */
export interface ByteStream {
  /** Queues bytes; false when the stream now holds more than its buffer (a drain follows once all has gone out). */
  write(bytes: Uint8Array): boolean;
  /** Bytes written and not yet handed on (to the kernel for a socket; an upgraded stream reports its transport's). */
  readonly unsent: number;
  /** `listener` runs each time everything written has gone out after a write returned false. */
  onDrain(listener: () => void): void;
  /** Flushes what was written, then closes. */
  end(): void;
  /** Closes at once. */
  destroy(): void;
  pause(): void;
  resume(): void;
}

/**
 * What answers a connection's requests: `Read` is what its own reader makes of a request's bytes, where it has one.
 * Methods, not function properties, so that a dispatch of any `Read` is a `Dispatch<object>` to the connection, which
 * hands each request back to the dispatch whose reader made it.
 */
export interface Dispatch<Read extends object = never> {
  /**
   * A request (its decoded tree, or what `read` made of it) to the reply to send, a SOAP fault included; never rejects.
   */
  answer(request: XmlDocument | Read, caller: Caller): Promise<XmlDocument>;
  /**
   * Reads a request straight from its bytes (an envelope's document, with the connection's session strings), without
   * a tree; undefined where it does not, and the connection decodes the tree instead (soap/request-cursor.ts).
   */
  read?(document: Uint8Array, session: SessionStrings): Read | undefined;
}

/** Who an upgrade authenticated. */
export interface UpgradedPeer {
  /** The caller's name, normalized (`DOMAIN\user` or `user@REALM`). */
  name: string;
  /**
   * The SIDs the domain vouched for (the user's, then the enabled groups'): a Kerberos ticket's PAC, winbind for a
   * domain account's NTLM logon; empty otherwise. They become the Caller's, for the roles.
   */
  sids: readonly string[];
  /** For the log: `NTLM`, `Kerberos`. */
  mechanismName: string;
  /** For the log: what protects the plaintext (`EncryptAndSign`, `Sign`). */
  protectionLevel: string;
}

export interface StreamUpgradeEvents {
  /** The upgrade succeeded: the peer, and the stream whose writes go out protected. */
  established(peer: UpgradedPeer, plaintext: ByteStream): void;
  /** Plaintext the client sent (never empty). */
  data(plain: Uint8Array): void;
  /**
   * The upgrade was refused or the protected stream broke; the upgrade has ended or destroyed the raw stream. A
   * refused handshake names the mechanism the client had chosen, when it got that far.
   */
  failed(error: Error, mechanismName?: string): void;
}

/** An upgrade in progress, then established, on one connection: it is fed the raw bytes from then on. */
export interface StreamUpgrade {
  receive(chunk: Uint8Array): void;
  /** The raw stream closed under it. */
  transportClosed(): void;
}

/** What each connection needs to know of the connection it upgrades. */
export interface UpgradeSite {
  connectionId: string;
  /** The client's address (throttling failed logons, logs). */
  remoteAddress: string;
  logger: Logger;
}

/**
 * A stream upgrade the server offers (CoreWCF's StreamUpgradeAcceptor): the framing UpgradeRequest names its content
 * type; after the UpgradeResponse the connection's raw bytes go to `accept`'s StreamUpgrade.
 */
export interface StreamUpgradeAcceptor {
  readonly contentType: string;
  accept(raw: ByteStream, site: UpgradeSite, events: StreamUpgradeEvents): StreamUpgrade;
}

/**
 * What the bridge reports as it works, for metrics (BRIDGE_METRICS_PORT). Implementations are cheap and never
 * throw; `NO_OBSERVER` reports nothing.
 */
export interface BridgeObserver {
  /** A call answered: its operation, `ok` or the fault's name, and how long it took. */
  call(operation: string, outcome: string, seconds: number): void;
  /** A security handshake ended: the mechanism (`NTLM`, `Kerberos`; for a refusal the acceptor that refused). */
  handshake(mechanism: string, outcome: 'established' | 'refused'): void;
  /** A connection refused or aborted by the bridge: a framing fault's code, `ServerTooBusy`, `MessageTimeout`, … */
  refusal(reason: string): void;
}

export const NO_OBSERVER: BridgeObserver = { call: () => {}, handshake: () => {}, refusal: () => {} };
