/**
 * A net.tcp client with Windows security for the negotiate benchmark, in TypeScript so that sealed calls are measured
 * at the bridge's speed rather than an initiator's (a python3-gssapi client spends more per call than the bridge).
 *
 * With credentials it does what a WCF client with NetTcpBinding, SecurityMode.Transport and
 * TcpClientCredentialType.Windows does over NTLM (test/support/nettcp/ntlm-nettcp.ts: the upgrade, the MS-NNS handshake
 * with SPNEGO around NTLMv2, then PreambleEnd and every record sealed in NNS data frames). Without credentials the same
 * channel speaks SecurityMode.None, so both rows of the benchmark run the same client code and differ only by the
 * security layer.
 */
import type { XmlElement } from '../tcp-bridge/src/binary-xml/index.ts';
import { NetTcpClientSession } from '../tcp-bridge/src/client/session.ts';
import {
  ClientConnection,
  NetTcpSession,
  type NtlmAccount,
  ntlmHandshake,
  upgrade,
} from '../test/support/nettcp/ntlm-nettcp.ts';
import { elementText } from './nettcp-client.ts';

export type NtlmCredentials = NtlmAccount;

/** One net.tcp session to an IIDBService endpoint, one call at a time. */
export class BenchChannel extends NetTcpSession {
  /** Connects and runs the preamble (and with credentials the upgrade and the NTLM handshake) up to PreambleAck. */
  static async open(endpoint: string, credentials?: NtlmCredentials): Promise<BenchChannel> {
    const url = new URL(endpoint);
    const connection = await ClientConnection.connect(url.hostname, Number(url.port || 808));
    try {
      if (!credentials) {
        connection.begin(new NetTcpClientSession(endpoint));
        await connection.expect('preambleAck');
        return new BenchChannel(connection);
      }
      await upgrade(connection, endpoint);
      await ntlmHandshake(connection, credentials);
      const channel = new BenchChannel(connection);
      await channel.preamble();
      return channel;
    } catch (error) {
      connection.socket.destroy();
      throw error;
    }
  }

  /** Heartbeat(); throws unless the answer is HeartbeatResult true. */
  async heartbeat(): Promise<void> {
    const body = await this.exchange('Heartbeat', []);
    const result = body.children.find(
      (c): c is XmlElement => c.kind === 'element' && c.localName === 'HeartbeatResult',
    );
    if (!result || elementText(result) !== 'true') throw new Error(`Heartbeat answered <${body.localName}>`);
  }

  /** Sends End and waits for the server's End or the close (at most 2 s). */
  async close(): Promise<void> {
    if (this.connection.closed) return;
    try {
      this.connection.write(this.connection.session.end());
      await Promise.race([this.connection.expect('end'), new Promise((r) => setTimeout(r, 2000))]);
    } catch {
      // the server closed first: as good
    } finally {
      this.connection.socket.destroy();
    }
  }
}
