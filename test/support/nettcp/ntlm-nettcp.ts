/**
 * net.tcp client sessions with Windows security over NTLM, in TypeScript: the MC-NMF preamble up to the
 * `application/negotiate` UpgradeRequest, the MS-NNS handshake with SPNEGO around NTLMv2 (NEGOTIATE, AUTHENTICATE with
 * the MIC, both mechListMICs; the NTLM messages from support/negotiate/ntlm-client.ts, the session security the
 * bridge's own NtlmSessionSecurity in the client role), then PreambleEnd and every record sealed in NNS data frames.
 *
 * The bytes are the client codec's (tcp-bridge/src/client/session.ts: framing records, NNS frames, sealing,
 * dictionaries); this module is the socket and the NTLM logon.
 * - ClientConnection: a socket and the codec of its current session, the server's records as awaitable events;
 * - NetTcpSession: one session's calls, in the clear or sealed, one at a time (bench/negotiate-client.ts builds the
 *   benchmark's channel on it);
 * - PooledNtlmSocket: a client socket that behaves like .NET's connection pool, one socket, many sessions. Each
 *   session writes the plaintext preamble up to the UpgradeRequest, logs on, seals PreambleEnd and its calls, and ends
 *   with End inside the sealed stream; the socket then carries the next session's plaintext preamble, as WCF's
 *   ConnectionPoolHelper returns the raw connection (not the upgraded one) to the pool.
 */
import { connect, type Socket } from 'node:net';
import { textToString, type XmlContent, type XmlElement } from '../../../tcp-bridge/src/binary-xml/index.ts';
import { type ClientEvent, NetTcpClientSession } from '../../../tcp-bridge/src/client/session.ts';
import { NEGOTIATE_UPGRADE } from '../../../tcp-bridge/src/framing/index.ts';
import { errorStatus, HandshakeId } from '../../../tcp-bridge/src/negotiate/nns.ts';
import type { NtlmSessionSecurity } from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import { OID } from '../../../tcp-bridge/src/negotiate/security-context.ts';
import {
  decodeNegTokenResp,
  encodeMechTypes,
  encodeNegTokenInit,
  encodeNegTokenResp,
  NegState,
} from '../../../tcp-bridge/src/negotiate/spnego.ts';
import { TestNtlmClient } from '../negotiate/ntlm-client.ts';
import { request } from './soap.ts';

export interface NtlmAccount {
  domain: string;
  user: string;
  password: string;
}

const MECH_TYPES = [OID.ntlm];

/** A client socket and the codec of the session it carries now; the server's records as events, in order. */
export class ClientConnection {
  private readonly events: ClientEvent[] = [];
  private failure: Error | undefined;
  private waiting: (() => void) | undefined;
  private current: NetTcpClientSession | undefined;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      try {
        if (!this.current) throw new Error('bytes from the server before any preamble');
        this.events.push(...this.current.push(chunk));
      } catch (error) {
        this.fail(error instanceof Error ? error : new Error(String(error)));
      }
      this.waiting?.();
    });
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('the connection closed')));
  }

  /** A socket to host:port (no Nagle); resolves once connected. */
  static async connect(host: string, port: number): Promise<ClientConnection> {
    const socket = connect({ host, port, noDelay: true });
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
    } catch (error) {
      socket.destroy();
      throw error;
    }
    return new ClientConnection(socket);
  }

  get closed(): boolean {
    return this.failure !== undefined;
  }

  get session(): NetTcpClientSession {
    if (!this.current) throw new Error('no session begun');
    return this.current;
  }

  /** Starts a session on this socket: its own codec, its preamble written. */
  begin(session: NetTcpClientSession): void {
    this.current = session;
    this.socket.write(session.preamble());
  }

  /** The session's records go out sealed from now on (and what came sealed already is read). */
  secure(security: NtlmSessionSecurity): void {
    this.events.push(...this.session.secure(security));
  }

  write(bytes: Uint8Array): void {
    this.socket.write(bytes);
  }

  /** The next event, or the failure. */
  async next(): Promise<ClientEvent> {
    for (;;) {
      const event = this.events.shift();
      if (event) return event;
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => (this.waiting = resolve));
      this.waiting = undefined;
    }
  }

  /** The next event, which must be of `type`; a framing fault or another record throws, naming it. */
  async expect<T extends ClientEvent['type']>(type: T): Promise<Extract<ClientEvent, { type: T }>> {
    const event = await this.next();
    if (event.type === type) return event as Extract<ClientEvent, { type: T }>;
    throw new Error(`${event.type === 'fault' ? `fault ${event.fault}` : event.type} instead of ${type}`);
  }

  private fail(error: Error): void {
    this.failure ??= error;
    this.waiting?.();
  }
}

/** Begins a session whose preamble asks for the negotiate upgrade, and reads the UpgradeResponse. */
export async function upgrade(connection: ClientConnection, via: string): Promise<void> {
  connection.begin(new NetTcpClientSession(via, { upgrade: NEGOTIATE_UPGRADE }));
  await connection.expect('upgradeResponse');
}

/** NegTokenInit(NEGOTIATE) → CHALLENGE → AUTHENTICATE + mechListMIC → accept-completed + mechListMIC; then sealed. */
export async function ntlmHandshake(connection: ClientConnection, account: NtlmAccount): Promise<void> {
  const session = connection.session;
  const readToken = async (expected: number): Promise<Uint8Array> => {
    const frame = await connection.expect('handshake');
    if (frame.id === HandshakeId.Error)
      throw new Error(`logon denied (HandshakeError 0x${errorStatus(frame.payload)?.littleEndian.toString(16)})`);
    if (frame.id !== expected)
      throw new Error(`handshake message 0x${frame.id.toString(16)} instead of 0x${expected.toString(16)}`);
    return frame.payload;
  };
  const ntlm = new TestNtlmClient(account.user, account.domain, account.password);
  connection.write(
    session.handshake(
      HandshakeId.InProgress,
      encodeNegTokenInit({ mechTypes: MECH_TYPES, mechToken: ntlm.negotiate() }),
    ),
  );
  const challenge = decodeNegTokenResp(await readToken(HandshakeId.InProgress));
  if (challenge.responseToken === undefined) throw new Error('no CHALLENGE in the answer');
  const authenticate = ntlm.authenticate(challenge.responseToken);
  const security = ntlm.security!;
  const mechList = encodeMechTypes(MECH_TYPES);
  connection.write(
    session.handshake(
      HandshakeId.InProgress,
      encodeNegTokenResp({
        responseToken: authenticate,
        mechListMIC: security.getMic(mechList, { mechListMic: true }),
      }),
    ),
  );
  const done = decodeNegTokenResp(await readToken(HandshakeId.Done));
  if (done.negState !== NegState.AcceptCompleted || done.mechListMIC === undefined)
    throw new Error('the handshake did not complete');
  security.verifyMic(mechList, done.mechListMIC, { mechListMic: true });
  if (!security.sealing) throw new Error('the context does not seal');
  connection.secure(security);
}

/** One net.tcp session's calls after the preamble, in the clear or sealed (as its codec is); one call at a time. */
export class NetTcpSession {
  constructor(protected readonly connection: ClientConnection) {}

  /** PreambleEnd after the upgrade, and the PreambleAck back. */
  async preamble(): Promise<void> {
    this.connection.write(this.connection.session.preambleEnd());
    await this.connection.expect('preambleAck');
  }

  /** The reply's body element (`<HeartbeatResponse>`) of a call. */
  protected async exchange(operation: string, params: XmlContent[]): Promise<XmlElement> {
    this.connection.write(this.connection.session.envelope(request(operation, params)));
    const { document } = await this.connection.expect('envelope');
    const envelope = document.children.find((c): c is XmlElement => c.kind === 'element');
    const body = envelope?.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === 'Body');
    const answer = body?.children.find((c): c is XmlElement => c.kind === 'element');
    if (!answer) throw new Error('a reply without a body element');
    return answer;
  }
}

/** One session on a pooled socket: sealed calls, then End. */
export class SealedSession extends NetTcpSession {
  /** The result element's text of a call without parameters (`Heartbeat` answers `true`). */
  async call(operation: string): Promise<string> {
    const answer = await this.exchange(operation, []);
    const result = answer.children.find(
      (c): c is XmlElement => c.kind === 'element' && c.localName === `${operation}Result`,
    );
    if (!result) throw new Error(`${operation} answered no ${operation}Result`);
    return result.children.map((c) => (c.kind === 'text' ? textToString(c) : '')).join('');
  }

  /** End inside the sealed stream, and the server's End back; the socket is the pool's again. */
  async end(): Promise<void> {
    this.connection.write(this.connection.session.end());
    await this.connection.expect('end');
  }
}

/** A client socket that opens sessions one after another, each with its own upgrade and NTLM logon. */
export class PooledNtlmSocket {
  private constructor(private readonly connection: ClientConnection) {}

  static async connect(port: number): Promise<PooledNtlmSocket> {
    return new PooledNtlmSocket(await ClientConnection.connect('127.0.0.1', port));
  }

  get socket(): Socket {
    return this.connection.socket;
  }

  /** A new session: plaintext preamble with the upgrade, NTLM logon, sealed PreambleEnd. */
  async session(via: string, account: NtlmAccount): Promise<SealedSession> {
    await upgrade(this.connection, via);
    await ntlmHandshake(this.connection, account);
    const session = new SealedSession(this.connection);
    await session.preamble();
    return session;
  }

  close(): void {
    this.connection.socket.destroy();
  }
}
