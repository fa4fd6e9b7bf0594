/**
 * The benchmark's floor: a trivial net.tcp server, in a process of its own like the servers it is compared with, that
 * answers PreambleEnd with PreambleAck and every envelope with a Heartbeat reply. No service, no database, no
 * dispatch. Prints its port on stdout; ends when stdin does.
 *
 * - By default (bench/bridge.ts) every reply is the same bytes: no RelatesTo, no session strings.
 * - With `--relates` (bench/dotnet.ts) it answers as a WCF client needs it: .NET matches a reply to its request by
 *   RelatesTo and waits for one that relates, so each envelope's MessageID is read (the connection's session
 *   dictionary, as any server must) and the reply carries it in RelatesTo. The floor a .NET client can measure.
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

const relates = process.argv.includes('--relates');
const SERVICE = { serviceNamespace: 'http://tempuri.org/' };
const cannedReply = sizedEnvelope(
  encodeEnvelope(writeReply({}, 'Heartbeat', true, SERVICE), new WriterSession(), { useDictionaries: false }),
);

const child = (e: XmlElement | undefined, name: string) =>
  e?.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === name);

/** The Heartbeat reply relating to `payload`'s MessageID, in the connection's sessions. */
function relatedReply(payload: Uint8Array, reader: ReaderSession, writer: WriterSession): Uint8Array {
  const { document } = decodeEnvelope(payload, reader);
  const envelope = document.children.find((c): c is XmlElement => c.kind === 'element');
  const id = child(child(envelope, 'Header'), 'MessageID');
  const messageId = id?.children.map((c) => (c.kind === 'text' ? textToString(c) : '')).join('');
  return sizedEnvelope(encodeEnvelope(writeReply({ messageId }, 'Heartbeat', true, SERVICE), writer));
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
