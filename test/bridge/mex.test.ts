/**
 * WS-MetadataExchange on the `/mex` via (tcp-bridge/src/mex.ts), on bytes, without sockets: a BridgeConnection with
 * Windows security required (a stand-in acceptor that must never be asked) and the real metadata dispatch, fed the
 * preamble and the binary WS-Transfer Get a .NET MetadataExchangeClient sends; the answer is decoded in the client's
 * session and compared with the text `GET /IDBService?wsdl` serves.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openNodeIdbService } from '../../src/runtime/node/idb/idb-service.ts';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { startBridge } from '../../tcp-bridge/src/server.ts';
import { NetTcpTestClient } from '../support/nettcp/nettcp.ts';
import { ByteBudget, type EndpointConfig } from '#idb';
import { writeWsdl } from '../../src/idb/wsdl.ts';
import { escapeAttribute, escapeText } from '../../src/idb/datatable.ts';
import {
  decodeEnvelope,
  encodeEnvelope,
  ReaderSession,
  textToString,
  WriterSession,
  type XmlDocument,
  type XmlElement,
} from '../../tcp-bridge/src/binary-xml/index.ts';
import { BridgeConnection } from '../../tcp-bridge/src/connection.ts';
import { clientPreamble, NEGOTIATE_UPGRADE, sizedEnvelope } from '../../tcp-bridge/src/framing/index.ts';
import {
  metadataDispatch,
  MEX_NS,
  TRANSFER_GET,
  TRANSFER_GET_RESPONSE,
  WSDL_DIALECT,
} from '../../tcp-bridge/src/mex.ts';
import type { StreamUpgradeAcceptor } from '../../tcp-bridge/src/streams.ts';
import { MemoryStream } from '../support/nettcp/memory-stream.ts';
import { child, elements, MESSAGE_ID, path, request, textOf, WSA } from '../support/nettcp/soap.ts';

const ENDPOINT: EndpointConfig = {
  serviceNamespace: 'http://tempuri.org/',
  security: 'windows',
  protectionLevel: 'Sign',
  dnsIdentity: 'bridge.example.org',
  address: 'net.tcp://bridge.example.org:8808/IDBService',
  port: 8808,
  host: '127.0.0.1',
};
const MEX_VIA = 'net.tcp://127.0.0.1:8808/IDBService/mex';
const FRAMING_FAULTS = 'http://schemas.microsoft.com/ws/2006/05/framing/faults';
const silent = { log: () => {} };

/** The Get MetadataExchangeClient sends: Action, MessageID, ReplyTo anonymous, To; an empty Body. */
const get = (action = TRANSFER_GET) => request('Get', [], { action, body: [] });

function connect() {
  const stream = new MemoryStream();
  const refusals: string[] = [];
  const upgrade: StreamUpgradeAcceptor = {
    contentType: NEGOTIATE_UPGRADE,
    accept: () => {
      throw new Error('the metadata via must not be upgraded');
    },
  };
  const connection = new BridgeConnection(stream, {
    connectionId: 'c1',
    remoteAddress: '127.0.0.1',
    upgrade,
    dispatch: { answer: () => Promise.reject(new Error('the endpoint dispatch must not serve the metadata via')) },
    metadata: { accepts: (via) => via === MEX_VIA, dispatch: metadataDispatch(() => ENDPOINT, silent) },
    decoder: {},
    initTimeoutMs: 10_000,
    idleTimeoutMs: 60_000,
    messageTimeoutMs: 10_000,
    sendTimeoutMs: 10_000,
    budget: new ByteBudget(1 << 20),
    maxCallsAhead: 8,
    maxUnsentBytes: 1 << 20,
    logger: silent,
    observer: { call: () => {}, handshake: () => {}, refusal: (reason) => refusals.push(reason) },
    onClosed: () => {},
  });
  const writer = new WriterSession();
  const reader = new ReaderSession();
  return {
    connection,
    refusals,
    send: (document: XmlDocument) => connection.receive(sizedEnvelope(encodeEnvelope(document, writer))),
    read: () => stream.records().map((r) => (r.type === 'envelope' ? decodeEnvelope(r.payload, reader).document : r)),
  };
}

/** An answer is dispatched asynchronously: wait until the stream holds the expected number of records. */
async function readUntil(c: ReturnType<typeof connect>, count: number) {
  const seen: ReturnType<typeof c.read> = [];
  while (seen.length < count) {
    seen.push(...c.read());
    if (seen.length < count) await new Promise((resolve) => setImmediate(resolve));
  }
  return seen;
}

/** An NBFX element back as the text writeWsdl writes, without the indentation between elements. */
function xmlText(node: XmlElement): string {
  const name = (prefix: string, local: string) => (prefix === '' ? local : `${prefix}:${local}`);
  const attrs = node.attributes
    .map((a) =>
      a.kind === 'xmlns'
        ? ` ${a.prefix === '' ? 'xmlns' : `xmlns:${a.prefix}`}="${escapeAttribute(a.uri)}"`
        : ` ${name(a.prefix, a.localName)}="${escapeAttribute(textToString(a.value))}"`,
    )
    .join('');
  const open = `<${name(node.prefix, node.localName)}${attrs}`;
  if (node.children.length === 0) return `${open}/>`;
  const inner = node.children
    .map((c) => (c.kind === 'element' ? xmlText(c) : c.kind === 'text' ? escapeText(textToString(c)) : ''))
    .join('');
  return `${open}>${inner}</${name(node.prefix, node.localName)}>`;
}

describe('WS-MetadataExchange on the /mex via', () => {
  it('serves WS-Transfer Get without the upgrade, anonymously, with the WSDL of GET /IDBService?wsdl', async () => {
    const c = connect();
    c.connection.receive(clientPreamble(MEX_VIA));
    expect(c.read()).toEqual([{ type: 'ack' }]);
    c.send(get());
    const [answer] = (await readUntil(c, 1)) as XmlDocument[];
    const header = path(answer!, 'Envelope', 'Header');
    expect(textOf(child(header, 'Action'))).toBe(TRANSFER_GET_RESPONSE);
    expect(textOf(child(header, 'RelatesTo'))).toBe(MESSAGE_ID);
    expect(child(header, 'RelatesTo').namespace).toBe(WSA);
    const metadata = path(answer!, 'Envelope', 'Body', 'Metadata');
    expect(metadata.namespace).toBe(MEX_NS);
    const sections = elements(metadata);
    expect(sections.map((s) => [s.localName, s.namespace])).toEqual([['MetadataSection', MEX_NS]]);
    const attributes = Object.fromEntries(
      sections[0]!.attributes.flatMap((a) => (a.kind === 'attribute' ? [[a.localName, textToString(a.value)]] : [])),
    );
    expect(attributes).toEqual({ Dialect: WSDL_DIALECT, Identifier: ENDPOINT.serviceNamespace });
    const [definitions] = elements(sections[0]!);
    const served = writeWsdl(ENDPOINT, { dataTable: 'dataset' })
      .replace(/^<\?xml[^>]*>\s*/, '')
      .replace(/>\s+</g, '><')
      .trim();
    expect(xmlText(definitions!)).toBe(served);
    expect(c.refusals).toEqual([]);
  });

  it('answers any other action with the ActionNotSupported fault, and the session goes on', async () => {
    const c = connect();
    c.connection.receive(clientPreamble(MEX_VIA));
    c.send(request('Heartbeat', []));
    c.send(get());
    const [ack, fault, answer] = (await readUntil(c, 3)) as XmlDocument[];
    expect(ack).toEqual({ type: 'ack' });
    const code = path(fault!, 'Envelope', 'Body', 'Fault', 'Code');
    expect(textOf(path(code, 'Subcode', 'Value'))).toBe('a:ActionNotSupported');
    expect(textOf(child(path(answer!, 'Envelope', 'Header'), 'Action'))).toBe(TRANSFER_GET_RESPONSE);
  });

  it("refuses an upgrade on the metadata via, and the endpoint's via without one", () => {
    const upgrading = connect();
    upgrading.connection.receive(clientPreamble(MEX_VIA, NEGOTIATE_UPGRADE));
    expect(upgrading.read()).toEqual([{ type: 'fault', fault: `${FRAMING_FAULTS}/UpgradeInvalid` }]);
    const endpoint = connect();
    endpoint.connection.receive(clientPreamble('net.tcp://127.0.0.1:8808/IDBService'));
    expect(endpoint.read()).toEqual([{ type: 'fault', fault: `${FRAMING_FAULTS}/UpgradeInvalid` }]);
  });
});

describe('BRIDGE_MEX', () => {
  it('serves the /mex via by default (in security mode None here), refuses it with EndpointNotFound when false', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'idb-mex-'));
    const start = async (mex?: string) => {
      const config = readBridgeConfig({
        BRIDGE_SECURITY: 'none',
        BRIDGE_PORT: '0',
        DATABASE_URL: `file:${join(folder, 'idb.sqlite')}`,
        FILES_URL: `file:${join(folder, 'files')}`,
        ...(mex === undefined ? {} : { BRIDGE_MEX: mex }),
      });
      return startBridge(config, await openNodeIdbService(config, silent), silent);
    };
    try {
      for (const [mex, answer] of [
        [undefined, { type: 'ack' }],
        ['false', { type: 'fault', fault: `${FRAMING_FAULTS}/EndpointNotFound` }],
      ] as const) {
        const bridge = await start(mex);
        try {
          const client = await NetTcpTestClient.open(bridge.port);
          expect(await client.preamble('net.tcp://localhost/IDBService/mex')).toEqual(answer);
          client.close();
        } finally {
          await bridge.close();
        }
      }
      expect(() => readBridgeConfig({ BRIDGE_MEX: 'yes' })).toThrow(/BRIDGE_MEX must be true or false/);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});
