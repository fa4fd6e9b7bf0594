/**
 * Writes one TCP conversation as a classic pcap file (LINKTYPE_RAW, IPv4), for dissectors such as tshark when a live
 * capture is not possible: the handshake, each recorded chunk as segments (at most 60 000 bytes) with consistent
 * sequence and acknowledgement numbers, and a FIN from each side. Checksums: the IPv4 header's is computed, the TCP
 * one is left at 0 (tshark does not check it by default). test/support/nettcp/pcap.ts reads such files back.
 */

import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { concatBytes } from '../../../src/bytes.ts';

export interface RecordedChunk {
  from: 'client' | 'server';
  bytes: Uint8Array;
  /** Milliseconds since the epoch. */
  at: number;
}

const MAX_SEGMENT = 60_000;
const CLIENT_IP = [127, 0, 0, 1];
const SERVER_IP = [127, 0, 0, 1];
const Flag = { fin: 0x01, syn: 0x02, psh: 0x08, ack: 0x10 } as const;

export function writePcap(chunks: readonly RecordedChunk[], ports: { client: number; server: number }): Uint8Array {
  const records: Uint8Array[] = [];
  const header = new Uint8Array(24);
  const h = new DataView(header.buffer);
  h.setUint32(0, 0xa1b2c3d4, true);
  h.setUint16(4, 2, true);
  h.setUint16(6, 4, true);
  h.setUint32(16, 65_535 + 40, true); // snaplen
  h.setUint32(20, 101, true); // LINKTYPE_RAW
  records.push(header);

  const start = chunks[0]?.at ?? Date.now();
  const end = chunks.at(-1)?.at ?? start;
  // Initial sequence numbers; seq[side] is the next byte that side sends.
  const seq = { client: 0x1000_0000, server: 0x2000_0000 };
  let ipId = 1;
  const packet = (from: 'client' | 'server', flags: number, payload: Uint8Array, at: number): void => {
    const to = from === 'client' ? 'server' : 'client';
    const ip = new Uint8Array(20 + 20 + payload.length);
    const v = new DataView(ip.buffer);
    ip[0] = 0x45;
    v.setUint16(2, ip.length);
    v.setUint16(4, ipId++ & 0xffff);
    v.setUint16(6, 0x4000); // don't fragment
    ip[8] = 64;
    ip[9] = 6;
    ip.set(from === 'client' ? CLIENT_IP : SERVER_IP, 12);
    ip.set(from === 'client' ? SERVER_IP : CLIENT_IP, 16);
    v.setUint16(10, ipChecksum(ip.subarray(0, 20)));
    v.setUint16(20, ports[from]);
    v.setUint16(22, ports[to]);
    v.setUint32(24, seq[from] >>> 0);
    v.setUint32(28, flags & Flag.ack ? seq[to] >>> 0 : 0);
    ip[32] = 5 << 4;
    ip[33] = flags;
    v.setUint16(34, 65_535);
    ip.set(payload, 40);
    seq[from] = (seq[from] + payload.length + (flags & (Flag.syn | Flag.fin) ? 1 : 0)) >>> 0;

    const record = new Uint8Array(16 + ip.length);
    const r = new DataView(record.buffer);
    r.setUint32(0, Math.floor(at / 1000), true);
    r.setUint32(4, Math.round((at % 1000) * 1000), true);
    r.setUint32(8, ip.length, true);
    r.setUint32(12, ip.length, true);
    record.set(ip, 16);
    records.push(record);
  };

  packet('client', Flag.syn, new Uint8Array(0), start);
  packet('server', Flag.syn | Flag.ack, new Uint8Array(0), start);
  packet('client', Flag.ack, new Uint8Array(0), start);
  for (const chunk of chunks) {
    for (let at = 0; at < chunk.bytes.length; at += MAX_SEGMENT) {
      packet(chunk.from, Flag.psh | Flag.ack, chunk.bytes.subarray(at, at + MAX_SEGMENT), chunk.at);
    }
  }
  packet('server', Flag.fin | Flag.ack, new Uint8Array(0), end);
  packet('client', Flag.fin | Flag.ack, new Uint8Array(0), end);
  packet('server', Flag.ack, new Uint8Array(0), end);

  return concatBytes(records);
}

function ipChecksum(header: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < header.length; i += 2) sum += (header[i]! << 8) | header[i + 1]!;
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

export interface RecordingProxy {
  /** Where clients connect. */
  port: number;
  /** What went through, per connection, in the order it arrived. */
  connections: { clientPort: number; chunks: RecordedChunk[] }[];
  close(): Promise<void>;
}

/** A TCP proxy on 127.0.0.1 in front of `targetPort` that records both directions' bytes. */
export async function startRecordingProxy(targetPort: number): Promise<RecordingProxy> {
  const connections: RecordingProxy['connections'] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer({ noDelay: true }, (client) => {
    const record = { clientPort: client.remotePort ?? 0, chunks: [] as RecordedChunk[] };
    connections.push(record);
    const upstream = connect({ host: '127.0.0.1', port: targetPort, noDelay: true });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (bytes: Buffer) => {
      record.chunks.push({ from: 'client', bytes: new Uint8Array(bytes), at: Date.now() });
      upstream.write(bytes);
    });
    upstream.on('data', (bytes: Buffer) => {
      record.chunks.push({ from: 'server', bytes: new Uint8Array(bytes), at: Date.now() });
      client.write(bytes);
    });
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
