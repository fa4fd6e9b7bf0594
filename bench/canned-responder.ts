/**
 * The benchmark's floor: a trivial net.tcp server, in a process of its own like the servers it is compared with, that
 * answers PreambleEnd with PreambleAck and every envelope with the same Heartbeat reply bytes (no RelatesTo, no
 * session strings). Prints its port on stdout.
 */
import { createServer, type AddressInfo } from 'node:net';
import { encodeEnvelope, WriterSession } from '../tcp-bridge/src/binary-xml/index.ts';
import { END_RECORD, PREAMBLE_ACK, ServerFramingDecoder, sizedEnvelope } from '../tcp-bridge/src/framing/index.ts';
import { writeReply } from '../tcp-bridge/src/soap/index.ts';

const reply = sizedEnvelope(encodeEnvelope(writeReply({}, 'Heartbeat', true, { serviceNamespace: 'http://tempuri.org/' }), new WriterSession(), { useDictionaries: false }));
const server = createServer({ noDelay: true }, (socket) => {
  const decoder = new ServerFramingDecoder();
  socket.on('data', (chunk: Buffer) => {
    try {
      for (const event of decoder.push(chunk)) {
        if (event.type === 'preambleEnd') socket.write(PREAMBLE_ACK);
        else if (event.type === 'sizedEnvelope') socket.write(reply);
        else if (event.type === 'end') socket.write(END_RECORD);
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
