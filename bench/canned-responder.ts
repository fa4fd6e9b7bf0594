/**
 * The benchmark's floor: a trivial net.tcp server, in a process of its own like the servers it is compared with, that
 * answers PreambleEnd with PreambleAck and every envelope with a Heartbeat reply. No service, no database, no
 * dispatch. Prints its port on stdout; ends when stdin does.
 *
 * - By default (bench/bridge.ts) every reply is the same bytes: no RelatesTo, no session strings.
 * - With `--relates` (bench/dotnet.ts) it answers as a WCF client needs it: .NET matches a reply to its request by
 *   RelatesTo and waits for one that relates, so each envelope's MessageID is read (the connection's session
 *   dictionary, as any server must) and the reply carries it in RelatesTo. The floor a .NET client can measure.
 *   Its reply is the one of the operation the envelope's Action names, with a fixed result (CANNED_RESULTS), so that
 *   the ExecuteNonQuery row (a database request opened, INSERTs in it, closed) has a floor too: everything of a call
 *   but the service and the database.
 */
import { createServer, type AddressInfo } from 'node:net';
import {
  decodeEnvelope,
  encodeEnvelope,
  ReaderSession,
  textToString,
  WriterSession,
  type XmlElement,
} from '../tcp-bridge/src/binary-xml/index.ts';
import { END_RECORD, PREAMBLE_ACK, ServerFramingDecoder, sizedEnvelope } from '../tcp-bridge/src/framing/index.ts';
import { writeReply } from '../tcp-bridge/src/soap/index.ts';
import { actionPrefix, type OperationName, type Operations } from '#idb';

const relates = process.argv.includes('--relates');
const SERVICE = { serviceNamespace: 'http://tempuri.org/' };
const cannedReply = sizedEnvelope(
  encodeEnvelope(writeReply({}, 'Heartbeat', true, SERVICE), new WriterSession(), { useDictionaries: false }),
);

/** The fixed results of the operations the bench's rows call with `--relates` (any other is answered as Heartbeat). */
const CANNED_RESULTS: { [K in OperationName]?: Operations[K]['result'] } = {
  Heartbeat: true,
  CreateDatabaseRequest: '6f1d2c3b-0000-4000-8000-000000000001',
  CloseDatabaseRequest: true,
  ExecuteNonQuery: 1,
};
const ACTION_PREFIX = actionPrefix(SERVICE.serviceNamespace);

const child = (e: XmlElement | undefined, name: string) =>
  e?.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === name);

const textOf = (e: XmlElement | undefined) =>
  e?.children.map((c) => (c.kind === 'text' ? textToString(c) : '')).join('');

/** The canned reply of the operation `payload` calls, relating to its MessageID, in the connection's sessions. */
function relatedReply(payload: Uint8Array, reader: ReaderSession, writer: WriterSession): Uint8Array {
  const { document } = decodeEnvelope(payload, reader);
  const envelope = document.children.find((c): c is XmlElement => c.kind === 'element');
  const header = child(envelope, 'Header');
  const messageId = textOf(child(header, 'MessageID'));
  const called = textOf(child(header, 'Action'))?.trim().slice(ACTION_PREFIX.length) as OperationName;
  const operation = Object.hasOwn(CANNED_RESULTS, called) ? called : 'Heartbeat';
  return sizedEnvelope(
    encodeEnvelope(writeReply({ messageId }, operation, CANNED_RESULTS[operation]!, SERVICE), writer),
  );
}

const server = createServer({ noDelay: true }, (socket) => {
  const decoder = new ServerFramingDecoder();
  let reader = new ReaderSession();
  let writer = new WriterSession();
  socket.on('data', (chunk: Buffer) => {
    try {
      for (const event of decoder.push(chunk)) {
        if (event.type === 'version') {
          reader = new ReaderSession();
          writer = new WriterSession();
        } else if (event.type === 'preambleEnd') socket.write(PREAMBLE_ACK);
        else if (event.type === 'end') socket.write(END_RECORD);
        else if (event.type === 'sizedEnvelope')
          socket.write(relates ? relatedReply(event.payload, reader, writer) : cannedReply);
      }
    } catch {
      socket.destroy();
    }
  });
  socket.on('error', () => socket.destroy());
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
