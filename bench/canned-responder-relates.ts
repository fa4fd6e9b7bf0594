/**
 * The canned responder of bench/canned-responder.ts as a WCF client needs it: .NET matches a reply to its request by
 * RelatesTo and waits for one that relates, so this one reads each envelope's MessageID (the connection's session
 * dictionary, as any server must) and answers the same Heartbeat reply with RelatesTo set. Still no service, no
 * database, no dispatch: the floor a .NET client can measure. In a process of its own; prints its port on stdout.
 */
import { createServer, type AddressInfo } from 'node:net';
import { decodeEnvelope, encodeEnvelope, ReaderSession, textToString, WriterSession, type XmlElement } from '../tcp-bridge/src/binary-xml/index.ts';
import { END_RECORD, PREAMBLE_ACK, ServerFramingDecoder, sizedEnvelope } from '../tcp-bridge/src/framing/index.ts';
import { writeReply } from '../tcp-bridge/src/soap/index.ts';

const child = (e: XmlElement | undefined, name: string) => e?.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === name);

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
        else if (event.type === 'sizedEnvelope') {
          const { document } = decodeEnvelope(event.payload, reader);
          const envelope = document.children.find((c): c is XmlElement => c.kind === 'element');
          const id = child(child(envelope, 'Header'), 'MessageID');
          const messageId = id?.children.map((c) => (c.kind === 'text' ? textToString(c) : '')).join('');
          socket.write(sizedEnvelope(encodeEnvelope(writeReply({ messageId }, 'Heartbeat', true, { serviceNamespace: 'http://tempuri.org/' }), writer)));
        }
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
