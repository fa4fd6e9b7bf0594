/** A Node socket as the ByteStream the bridge's layers write to: Node's write result, its buffered bytes, 'drain'. */
import type { Socket } from 'node:net';
import type { ConnectionPolling } from './reply-polling.ts';
import type { ByteStream } from './streams.ts';

/** `polling` hears of every write (reply-polling.ts); the socket's reader tells it of what comes in. */
export function socketStream(socket: Socket, polling?: ConnectionPolling): ByteStream {
  return {
    write: (bytes) => {
      const fits = socket.write(bytes);
      polling?.replied();
      return fits;
    },
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
