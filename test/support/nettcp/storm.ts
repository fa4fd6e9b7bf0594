/**
 * A reconnect storm (CoreWCF issue 1535: ~2 000 clients reconnecting after a restart): `count` connections opened at
 * once, each sending its preamble and one Heartbeat (plain), or doing the negotiate upgrade and an NTLM logon first
 * (sealed); each ends served (PreambleAck and the reply), refused (a framing fault: ServerTooBusy over
 * BRIDGE_MAX_CONNECTIONS), or reset (closed with neither). Shared by test/bridge/storm.test.ts and bench/bridge-storm.ts.
 */
import { connect } from 'node:net';
import { encodeEnvelope, WriterSession } from '../../../tcp-bridge/src/binary-xml/index.ts';
import { readInt31 } from '../../../tcp-bridge/src/bytes.ts';
import { clientPreamble, RecordType, sizedEnvelope } from '../../../tcp-bridge/src/framing/index.ts';
import { type NtlmAccount, PooledNtlmSocket } from './ntlm-nettcp.ts';
import { request } from './soap.ts';

export type StormOutcome = 'served' | 'refused' | 'reset';

export interface StormResult {
  served: number;
  /** Framing faults, by fault string. */
  refused: Map<string, number>;
  reset: number;
  /** From the first connect to the last connection's outcome. */
  ms: number;
}

const VIA = 'net.tcp://localhost/IDBService';

/** The bytes every plain client sends: the preamble and a Heartbeat in a new session (the same for all). */
const PLAIN_SESSION = Buffer.concat([
  clientPreamble(VIA),
  sizedEnvelope(encodeEnvelope(request('Heartbeat', []), new WriterSession())),
]);

/** One plain client: preamble and Heartbeat in one write, then the records until the reply or a fault. */
function plainClient(port: number): Promise<{ outcome: StormOutcome; fault?: string }> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1', noDelay: true });
    let buffer = Buffer.alloc(0);
    let acked = false;
    let done = false;
    const finish = (outcome: StormOutcome, fault?: string) => {
      if (done) return;
      done = true;
      socket.destroy();
      resolve(fault === undefined ? { outcome } : { outcome, fault });
    };
    socket.on('connect', () => socket.write(PLAIN_SESSION));
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (!acked && buffer[0] === RecordType.PreambleAck) {
        acked = true;
        buffer = buffer.subarray(1);
      }
      const type = buffer[0];
      if (type !== RecordType.SizedEnvelope && type !== RecordType.Fault) return;
      const size = readInt31(buffer, 1);
      if (typeof size !== 'object' || buffer.length < 1 + size.size + size.value) return;
      if (type === RecordType.SizedEnvelope) finish('served');
      else finish('refused', buffer.subarray(1 + size.size, 1 + size.size + size.value).toString('utf8'));
    });
    socket.on('error', () => finish('reset'));
    socket.on('close', () => finish('reset'));
  });
}

/** One sealed client: upgrade, NTLM logon, PreambleEnd and Heartbeat inside the sealed stream. */
async function sealedClient(port: number, account: NtlmAccount): Promise<{ outcome: StormOutcome; fault?: string }> {
  let socket: PooledNtlmSocket | undefined;
  try {
    socket = await PooledNtlmSocket.connect(port);
    const session = await socket.session(VIA, account);
    return (await session.call('Heartbeat')) === 'true' ? { outcome: 'served' } : { outcome: 'reset' };
  } catch (error) {
    const fault = /record (http\S+) instead/.exec((error as Error).message)?.[1];
    return fault === undefined ? { outcome: 'reset' } : { outcome: 'refused', fault };
  } finally {
    socket?.close();
  }
}

/** Opens `count` connections at once against the bridge on `port` and waits for every outcome. */
export async function reconnectStorm(port: number, count: number, account?: NtlmAccount): Promise<StormResult> {
  const started = performance.now();
  const outcomes = await Promise.all(
    Array.from({ length: count }, () => (account === undefined ? plainClient(port) : sealedClient(port, account))),
  );
  const result: StormResult = { served: 0, refused: new Map(), reset: 0, ms: performance.now() - started };
  for (const { outcome, fault } of outcomes) {
    if (outcome === 'served') result.served++;
    else if (outcome === 'reset') result.reset++;
    else result.refused.set(fault!, (result.refused.get(fault!) ?? 0) + 1);
  }
  return result;
}
