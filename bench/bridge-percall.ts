/**
 * The bridge's CPU per call on the protocol path, repeatable: N calls of one operation through a real
 * BridgeConnection (framing decode, envelope decode, dispatch to the SQLite service, reply encode, framing), fed
 * in-process with request bytes the client codec encoded beforehand, one call in flight; no socket, no client decode.
 * Meant to run bundled under callgrind at two call counts: per call = (I(N2) - I(N1)) / (N2 - N1). The requests are
 * always encoded for `--encode` calls (default 4000) so that their cost cancels out of the difference; with fewer
 * (`--encode 2`), the requests after the first are sent again (a session's later requests differ only in their
 * MessageID, which the bridge does not check for repeats), for a profile of the bridge's side alone.
 *
 *   npx esbuild bench/bridge-percall.ts --bundle --platform=node --format=esm --packages=external \
 *     --outfile=dist/percall/percall.mjs          (inside the repository, so that packages resolve)
 *   valgrind --tool=callgrind node --single-threaded dist/percall/percall.mjs --op Heartbeat --calls 2000 --encode 2
 *   node --cpu-prof dist/percall/percall.mjs --op ReturnScalar --calls 20000 --encode 2
 *
 * `--check` decodes every reply with the client codec and fails on anything but the expected result.
 * `--op ReturnDatatable --rows N` (default 2000) reads N rows of the .NET bench's table (test/dotnet/WcfClient/Bench.cs:
 * six columns, seeded here the same way; `--check` then counts the diffgram's rows). `--op ExecuteNonQuery` is the
 * .NET bench's INSERT inside one database request, opened before the calls (left open: the run ends with an abort).
 * `--database postgres://…` runs them on that (empty) PostgreSQL database instead of a SQLite file in a temp folder.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ByteBudget, EMPTY_GUID, jsonLogger } from '#idb';
import { openNodeIdbService } from '../src/runtime/node/idb/idb-service.ts';
import { element, stringText, textToString, uuidText, type XmlElement } from '../tcp-bridge/src/binary-xml/index.ts';
import { NetTcpClientSession } from '../tcp-bridge/src/client/session.ts';
import { readBridgeConfig } from '../tcp-bridge/src/config.ts';
import { BridgeConnection } from '../tcp-bridge/src/connection.ts';
import { anonymousCaller } from '../tcp-bridge/src/connection-queue.ts';
import { soapDispatch } from '../tcp-bridge/src/dispatch.ts';
import { NO_OBSERVER, type ByteStream } from '../tcp-bridge/src/streams.ts';
import { bridgeFolderEnv } from '../test/support/nettcp/bridge-folder.ts';
import { parametersElement, requestEnvelope } from './nettcp-values.ts';

const ENDPOINT = 'net.tcp://127.0.0.1:8808/IDBService';
const NAMESPACE = 'http://tempuri.org/';
const SIZED_ENVELOPE = 0x06;
const PREAMBLE_ACK = 0x0b;

const { values } = parseArgs({
  options: {
    op: { type: 'string', default: 'Heartbeat' },
    calls: { type: 'string', default: '1000' },
    encode: { type: 'string', default: '4000' },
    check: { type: 'boolean', default: false },
    rows: { type: 'string', default: '2000' },
    database: { type: 'string' },
  },
});
const OPERATIONS = ['Heartbeat', 'ReturnScalar', 'ReturnDatatable', 'ExecuteNonQuery'] as const;
const op = OPERATIONS.find((o) => o === values.op) ?? 'Heartbeat';
const rows = Number(values.rows);
const calls = Number(values.calls);
/** Requests encoded beforehand; past them the ones after the first are sent again (for profiles of the server alone). */
const encoded = Math.max(2, Number(values.encode));

/** A client SQL call's body children: its database request, its text and its parameters. */
const sqlCall = (requestId: string, sql: string, parameters: Parameters<typeof parametersElement>[0] = []) => [
  element('', 'requestId', [], [uuidText(requestId)]),
  element('', 'sql', [], [stringText(sql)]),
  parametersElement(parameters),
];

/** The request's body children and the reply's expected result text (`request`: ExecuteNonQuery's database request). */
const callOf = (request: string) => ({
  Heartbeat: { children: [], result: 'true' },
  ReturnScalar: {
    children: sqlCall(EMPTY_GUID, 'SELECT @v', [{ name: '@v', value: { type: 'int', value: 42 } }]),
    result: '42',
  },
  ReturnDatatable: {
    children: sqlCall(
      EMPTY_GUID,
      `SELECT id, name, amount, created, flag, note FROM bench_rows ORDER BY id LIMIT ${rows}`,
    ),
    result: `${rows} rows`,
  },
  ExecuteNonQuery: {
    children: sqlCall(request, "INSERT INTO bench_writes (channel, note) VALUES (@c, 'x')", [
      { name: '@c', value: { type: 'int', value: 0 } },
    ]),
    result: '1',
  },
});
/** The .NET bench's table and rows (Bench.cs `Seed`). */
const SEED = [
  'CREATE TABLE bench_rows (id INTEGER PRIMARY KEY, name VARCHAR(40), amount DOUBLE PRECISION, created TIMESTAMP, flag BOOLEAN, note TEXT)',
  `INSERT INTO bench_rows (id, name, amount, created, flag, note) WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${Math.max(rows, 1)}) SELECT i, 'row ' || i, i * 1.25, '2024-03-01 10:00:00', i % 2 = 0, 'a note of some length for row ' || i FROM c`,
];

const folder = mkdtempSync(join(tmpdir(), 'bridge-percall-'));
writeFileSync(join(folder, 'roles.json'), JSON.stringify({ writer: ['anonymous'] }));
const env = bridgeFolderEnv(folder);
// `--database postgres://…`: the same calls on PostgreSQL (an empty database: the seed creates its table).
if (values.database !== undefined) env.DATABASE_URL = values.database;
const config = readBridgeConfig(env);
// The real JSON logger at the bridge's default level; its lines are dropped instead of batched to stdout.
let logged = 0;
const logger = jsonLogger('info', (line) => {
  logged += line.length;
});
const service = await openNodeIdbService(config, logger);
const caller = anonymousCaller('percall');
if (op === 'ReturnDatatable')
  for (const sql of SEED) await service.call('ExecuteNonQuery', caller, { requestId: EMPTY_GUID, sql, parameters: [] });
let request = EMPTY_GUID;
if (op === 'ExecuteNonQuery') {
  const sql = 'CREATE TABLE bench_writes (channel INTEGER, note TEXT)';
  await service.call('ExecuteNonQuery', caller, { requestId: EMPTY_GUID, sql, parameters: [] });
  request = await service.call('CreateDatabaseRequest', caller, { database: null });
}
const CALLS = callOf(request);
const dispatch = soapDispatch(service, {
  serviceNamespace: config.endpoint.serviceNamespace,
  logger,
  observer: NO_OBSERVER,
});

const client = new NetTcpClientSession(ENDPOINT);
const preamble = client.preamble();
const requests: Uint8Array[] = [];
for (let i = 0; i < encoded; i++) {
  const messageId = `urn:uuid:00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
  const envelope = requestEnvelope(NAMESPACE, ENDPOINT, op, CALLS[op].children, messageId);
  requests.push(client.envelope({ children: [envelope] }));
}

/** The replies' bytes, counted record by record: a reply is whole when its SizedEnvelope's size has been written. */
let answered = 0;
let left = 0;
let next = 0;
let finished: () => void = () => {};
const done = new Promise<void>((resolve) => {
  finished = resolve;
});
const stream: ByteStream = {
  write(bytes) {
    if (values.check) check(bytes);
    if (left === 0) {
      if (bytes[0] === PREAMBLE_ACK) return true;
      if (bytes[0] !== SIZED_ENVELOPE) throw new Error(`record 0x${bytes[0]?.toString(16)} instead of a reply`);
      let size = 0;
      let at = 1;
      for (let shift = 0; ; shift += 7) {
        const byte = bytes[at++]!;
        size += (byte & 0x7f) * 2 ** shift;
        if (byte < 0x80) break;
      }
      left = size - (bytes.length - at);
    } else left -= bytes.length;
    if (left === 0) {
      answered++;
      // As a socket's next 'data' would: after the reply has been written, not inside its write.
      queueMicrotask(feed);
    }
    return true;
  },
  unsent: 0,
  onDrain: () => {},
  end: () => {},
  destroy: () => {},
  pause: () => {},
  resume: () => {},
};

const connection = new BridgeConnection(stream, {
  connectionId: 'percall',
  remoteAddress: '127.0.0.1',
  dispatch,
  decoder: { maxMessageSize: config.maxMessageBytes },
  initTimeoutMs: config.initTimeoutMs,
  idleTimeoutMs: config.idleTimeoutMs,
  messageTimeoutMs: config.messageTimeoutMs,
  budget: new ByteBudget(config.maxInflightBytes),
  sendTimeoutMs: config.sendTimeoutMs,
  maxCallsAhead: config.maxCallsPerConnection,
  maxUnsentBytes: config.maxUnsentBytes,
  logger,
  observer: NO_OBSERVER,
  onClosed: () => {},
});

function feed(): void {
  if (next === calls) {
    finished();
    return;
  }
  const at = next < encoded ? next : 1 + ((next - 1) % (encoded - 1));
  next++;
  connection.receive(requests[at]!);
}

const checker = new NetTcpClientSession(ENDPOINT);
let checked = 0;
function check(bytes: Uint8Array): void {
  for (const event of checker.push(bytes)) {
    if (event.type === 'preambleAck') continue;
    if (event.type !== 'envelope') throw new Error(`unexpected ${event.type}`);
    const envelope = event.document.children[0] as XmlElement;
    const body = envelope.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === 'Body')!;
    const result = (body.children[0] as XmlElement).children[0] as XmlElement;
    const text =
      op === 'ReturnDatatable'
        ? `${countRows(result)} rows`
        : result.children.map((c) => (c.kind === 'text' ? textToString(c) : '')).join('');
    if (result.localName !== `${op}Result` || text !== CALLS[op].result)
      throw new Error(`reply ${checked}: <${result.localName}>${text}</${result.localName}>`);
    checked++;
  }
}

/** The rows of a DataTable reply: the elements of the diffgram's DocumentElement. */
function countRows(result: XmlElement): number {
  const diffgram = result.children.find((c): c is XmlElement => c.kind === 'element' && c.localName === 'diffgram');
  const document = diffgram?.children.find((c): c is XmlElement => c.kind === 'element');
  return document?.children.filter((c) => c.kind === 'element').length ?? 0;
}

connection.receive(preamble);
feed();
await done;
connection.abort();
await service.close();
rmSync(folder, { recursive: true, force: true });
if (answered !== calls) throw new Error(`${answered} replies to ${calls} calls`);
if (values.check && checked !== calls) throw new Error(`${checked} replies checked of ${calls}`);
console.error(`${op}: ${calls} calls answered${values.check ? ' and checked' : ''}, ${logged} bytes logged`);
