/**
 * Just enough of libpcap's file format to get the bytes of one TCP connection out of a capture: classic pcap (either
 * byte order, micro- or nanosecond), Ethernet / Linux cooked / BSD loopback / raw IP links, IPv4 and IPv6, and the
 * segments reassembled by sequence number per direction (retransmissions dropped). The client is the side that sent
 * the first SYN.
 */

import { concatBytes as concat } from '../../../src/bytes.ts';

export interface TcpConversation {
  clientPort: number;
  serverPort: number;
  /** Payloads of the client's segments in stream order, as they were sent (handy as realistic chunk boundaries). */
  clientSegments: Uint8Array[];
  serverSegments: Uint8Array[];
  /** The reassembled byte streams. */
  client: Uint8Array;
  server: Uint8Array;
}

interface Segment {
  from: string;
  to: string;
  seq: number;
  syn: boolean;
  ack: boolean;
  payload: Uint8Array;
}

/** The `index`th TCP connection of the capture (in the order of their SYNs). */
export function readTcpConversation(file: Uint8Array, index = 0): TcpConversation {
  const segments = [...packets(file)].map(parseLink).filter((s): s is Segment => s !== undefined);
  const opening = segments.filter((s) => s.syn && !s.ack)[index];
  if (!opening) throw new Error(`no SYN number ${index} in the capture`);
  const client = opening.from;
  const server = opening.to;
  const toServer = reassemble(segments.filter((s) => s.from === client && s.to === server));
  const toClient = reassemble(segments.filter((s) => s.from === server && s.to === client));
  return {
    clientPort: port(client),
    serverPort: port(server),
    clientSegments: toServer,
    serverSegments: toClient,
    client: concat(toServer),
    server: concat(toClient),
  };
}

function* packets(file: Uint8Array): Generator<{ link: number; data: Uint8Array }> {
  const view = new DataView(file.buffer, file.byteOffset, file.byteLength);
  const magic = view.getUint32(0, false);
  let little: boolean;
  if (magic === 0xa1b2c3d4 || magic === 0xa1b23c4d) little = false;
  else if (magic === 0xd4c3b2a1 || magic === 0x4d3cb2a1) little = true;
  else throw new Error('not a classic pcap file (pcapng is not read here)');
  const link = view.getUint32(20, little) & 0x0fffffff;
  let at = 24;
  while (at + 16 <= file.length) {
    const captured = view.getUint32(at + 8, little);
    const start = at + 16;
    if (start + captured > file.length) throw new Error('truncated packet record');
    yield { link, data: file.subarray(start, start + captured) };
    at = start + captured;
  }
}

function parseLink({ link, data }: { link: number; data: Uint8Array }): Segment | undefined {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  switch (link) {
    case 1: {
      let at = 12;
      let type = view.getUint16(at);
      while (type === 0x8100 || type === 0x88a8) {
        at += 4;
        type = view.getUint16(at);
      }
      return parseIp(data.subarray(at + 2), type);
    }
    case 0:
    case 108: {
      const family = data[0] === 0 ? view.getUint32(0, false) : view.getUint32(0, true);
      return parseIp(data.subarray(4), family === 2 ? 0x0800 : 0x86dd);
    }
    case 113:
      return parseIp(data.subarray(16), view.getUint16(14));
    case 276:
      return parseIp(data.subarray(20), view.getUint16(0));
    case 12:
    case 101:
      return parseIp(data, data[0]! >> 4 === 4 ? 0x0800 : 0x86dd);
    default:
      throw new Error(`link type ${link} is not read here`);
  }
}

function parseIp(ip: Uint8Array, etherType: number): Segment | undefined {
  const view = new DataView(ip.buffer, ip.byteOffset, ip.byteLength);
  let source: string;
  let destination: string;
  let tcp: Uint8Array;
  if (etherType === 0x0800) {
    if (ip[9] !== 6) return undefined;
    const headerLength = (ip[0]! & 0x0f) * 4;
    const total = view.getUint16(2);
    source = ip.subarray(12, 16).join('.');
    destination = ip.subarray(16, 20).join('.');
    tcp = ip.subarray(headerLength, total);
  } else if (etherType === 0x86dd) {
    if (ip[6] !== 6) return undefined;
    source = hex(ip.subarray(8, 24));
    destination = hex(ip.subarray(24, 40));
    tcp = ip.subarray(40, 40 + view.getUint16(4));
  } else {
    return undefined;
  }
  const t = new DataView(tcp.buffer, tcp.byteOffset, tcp.byteLength);
  const flags = tcp[13]!;
  return {
    from: `${source}:${t.getUint16(0)}`,
    to: `${destination}:${t.getUint16(2)}`,
    seq: t.getUint32(4),
    syn: (flags & 0x02) !== 0,
    ack: (flags & 0x10) !== 0,
    payload: tcp.subarray((tcp[12]! >> 4) * 4),
  };
}

/** Orders one direction's payloads by sequence number, relative to its SYN, dropping bytes already seen. */
function reassemble(segments: Segment[]): Uint8Array[] {
  const syn = segments.find((s) => s.syn);
  if (!syn) throw new Error('a direction without SYN');
  const base = (syn.seq + 1) >>> 0;
  const withData = segments
    .filter((s) => s.payload.length > 0)
    .map((s) => ({ offset: (s.seq - base) >>> 0, payload: s.payload }))
    .sort((a, b) => a.offset - b.offset);
  const out: Uint8Array[] = [];
  let next = 0;
  for (const { offset, payload } of withData) {
    if (offset > next) throw new Error(`bytes ${next}..${offset} of a direction were not captured`);
    const fresh = payload.subarray(next - offset);
    if (fresh.length === 0) continue;
    out.push(fresh);
    next += fresh.length;
  }
  return out;
}

function port(endpoint: string): number {
  return Number(endpoint.slice(endpoint.lastIndexOf(':') + 1));
}

function hex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** `bytes` cut into pieces of the given sizes, cycled: how a socket or an upgrade might deliver it. */
export function chunked(bytes: Uint8Array, sizes: readonly number[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = Math.max(1, sizes[i % sizes.length]!);
    out.push(bytes.subarray(at, at + size));
    at += size;
  }
  return out;
}

/** The streams of a `tshark -z follow,tcp,raw` text: client lines flush left, server lines indented by a tab. */
export function readFollowRaw(text: string): { client: Uint8Array; server: Uint8Array } {
  const client: Uint8Array[] = [];
  const server: Uint8Array[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^(\t?)([0-9a-f]+)$/.exec(line);
    if (!m) continue;
    const bytes = Uint8Array.from(m[2]!.match(/../g)!, (h) => parseInt(h, 16));
    (m[1] ? server : client).push(bytes);
  }
  return { client: concat(client), server: concat(server) };
}
