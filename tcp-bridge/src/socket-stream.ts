/** A Node socket as the ByteStream the bridge's layers write to: Node's write result, its buffered bytes, 'drain'. */
import type { Socket } from 'node:net';
import type { ByteStream } from './streams.ts';

export function socketStream(socket: Socket): ByteStream {
  return {
    write: (bytes) => socket.write(bytes),
    get unsent() {
      return socket.writableLength;
    },
    onDrain: (listener) => void socket.on('drain', listener),
    end: () => void socket.end(),
    destroy: () => void socket.destroy(),
    pause: () => void socket.pause(),
    resume: () => void socket.resume(),
  };
}
