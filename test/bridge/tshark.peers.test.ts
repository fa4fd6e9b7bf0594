/**
 * An independent check of the bridge's bytes: a real session with Windows security (NTLM from gss-ntlmssp under MIT
 * SPNEGO, through support/negotiate/nns-client.py, against the TypeScript NTLM acceptor) is captured and handed to
 * tshark, whose dissectors of MC-NMF, MS-NNS, SPNEGO and NTLMSSP were written from the specifications and Windows
 * traffic, not from this code. The session carries Heartbeat calls through the sealed stream, so the data frames are
 * real too.
 *
 * Capture: `tshark -i lo` around the session (root or capture capabilities; CI runs as root). Where live capture is
 * refused, both directions' bytes are recorded by a proxy in front of the bridge and written as a pcap
 * (support/nettcp/pcap-writer.ts); the test says which one it used (TSHARK_CAPTURE=recorded picks the proxy). Needs
 * tshark and the initiators of windows.peers.test.ts; without them it is skipped and says so.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeEnvelope, WriterSession } from '../../tcp-bridge/src/binary-xml/index.ts';
import { readBridgeConfig } from '../../tcp-bridge/src/config.ts';
import { clientPreamble, framing, NEGOTIATE_UPGRADE, sizedEnvelope } from '../../tcp-bridge/src/framing/index.ts';
import { securityBackends, startBridge, type RunningBridge } from '../../tcp-bridge/src/server.ts';
import { openNodeIdbService } from '../../src/runtime/node/idb/idb-service.ts';
import { runNnsClient, type ClientResult } from '../support/negotiate/negotiate-echo.ts';
import { startLiveCapture } from '../support/nettcp/live-capture.ts';
import { readTcpConversation } from '../support/nettcp/pcap.ts';
import { startRecordingProxy, writePcap } from '../support/nettcp/pcap-writer.ts';
import { request } from '../support/nettcp/soap.ts';
import { needPeers, PEERS } from '../support/peers.ts';

const TSHARK = 'tshark';
const missing = needPeers('bridge tshark', PEERS.tshark, PEERS.gssInitiators);

const VIA = 'net.tcp://localhost:8808/IDBService';
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe.skipIf(missing)('a captured bridge session with Windows security, dissected by tshark', () => {
  let folder: string;
  let bridge: RunningBridge;
  let capture: { how: 'live' | 'recorded'; file: string; serverPort: number; outcome: ClientResult };
  let dissection: string;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'bridge-tshark-'));
    const users = join(folder, 'users');
    await writeFile(users, 'TESTDOM:alice:Secret123!\n');
    chmodSync(users, 0o600);
    await writeFile(join(folder, 'roles.json'), JSON.stringify({ writer: ['TESTDOM\\alice'] }));
    const config = readBridgeConfig({
      BRIDGE_PORT: '0',
      BRIDGE_NTLM_USERS: users,
      BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
      DATABASE_URL: `file:${join(folder, 'idb.sqlite')}`,
      FILES_URL: `file:${join(folder, 'files')}`,
    });
    const logger = { log: () => {} };
    bridge = await startBridge(config, await openNodeIdbService(config, logger), logger, securityBackends(config));

    const writer = new WriterSession();
    const messages = [
      framing().preambleEnd().finish(),
      ...[1, 2].map(() => sizedEnvelope(encodeEnvelope(request('Heartbeat', []), writer))),
    ];
    const args = [
      '--preamble',
      hex(clientPreamble(VIA, NEGOTIATE_UPGRADE)),
      ...messages.flatMap((m) => ['--message', hex(m)]),
    ];
    const clientFile = join(folder, 'client');
    writeFileSync(clientFile, 'TESTDOM:alice:Secret123!\n', { mode: 0o600 });
    const env = { NTLM_USER_FILE: clientFile };

    const file = join(folder, 'session.pcap');
    const live =
      process.env.TSHARK_CAPTURE === 'recorded'
        ? undefined
        : await startLiveCapture(bridge.port, file, 'bridge tshark');
    if (live) {
      const outcome = await runNnsClient(bridge.port, 'nettcp', args, env);
      await live.stop();
      capture = { how: 'live', file, serverPort: bridge.port, outcome };
    } else {
      const proxy = await startRecordingProxy(bridge.port);
      const outcome = await runNnsClient(proxy.port, 'nettcp', args, env);
      await new Promise((r) => setTimeout(r, 200));
      await proxy.close();
      const [connection] = proxy.connections;
      writeFileSync(file, writePcap(connection!.chunks, { client: connection!.clientPort, server: bridge.port }));
      capture = { how: 'recorded', file, serverPort: bridge.port, outcome };
    }
    console.info(`[bridge tshark] ${capture.how} capture, ${readFileSync(file).length} bytes`);
    // `-d tcp.port==P,mc-nmf`: MC-NMF has no port of its own in tshark 4.0 (808 is not registered); MS-NNS, SPNEGO
    // and NTLMSSP follow from the UpgradeRequest's content type.
    const run = spawnSync(
      TSHARK,
      ['-r', file, '-d', `tcp.port==${capture.serverPort},mc-nmf`, '-Y', `tcp.port==${capture.serverPort}`, '-V'],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    if (run.status !== 0) throw new Error(`tshark -r exited ${run.status}: ${run.stderr}`);
    dissection = run.stdout;
  }, 60_000);

  afterAll(async () => {
    await bridge?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('is a whole session: the client got both Heartbeat answers, and the capture holds every byte of it', () => {
    expect(capture.outcome).toMatchObject({ result: 'ok', encrypted_flag: true });
    expect(capture.outcome.replies).toHaveLength(3); // PreambleAck and two SizedEnvelopes
    expect(existsSync(capture.file)).toBe(true);
    const conversation = readTcpConversation(readFileSync(capture.file));
    expect(conversation.serverPort).toBe(capture.serverPort);
    expect(hex(conversation.client.subarray(0, clientPreamble(VIA, NEGOTIATE_UPGRADE).length))).toBe(
      hex(clientPreamble(VIA, NEGOTIATE_UPGRADE)),
    );
    expect(conversation.server[0]).toBe(0x0a); // UpgradeResponse
  });

  it('dissects as MC-NMF: the preamble records, the negotiate upgrade request and its response', () => {
    expect(dissection).toMatch(/\.NET Message Framing Protocol/);
    for (const record of [
      'Version Record',
      'Mode Record',
      'Via Record',
      'Known Encoding Record',
      'Upgrade Request Record',
      'Upgrade Response Record',
    ]) {
      expect(dissection).toContain(record);
    }
    expect(dissection).toContain(`Via: ${VIA}`);
    expect(dissection).toContain('Upgrade Protocol: application/negotiate');
  });

  it('dissects as MS-NNS: handshake frames in progress and done, then data frames', () => {
    expect(dissection).toMatch(/\.NET NegotiateStream Protocol/);
    // NegTokenInit, AUTHENTICATE from the client; CHALLENGE from the bridge; its accept-completed as HandshakeDone.
    expect(count(dissection, /MessageID: Handshake In Progress \(22\)/g)).toBe(3);
    expect(count(dissection, /MessageID: Handshake Done \(20\)/g)).toBe(1);
    expect(dissection).not.toMatch(/MessageID: Handshake Error/);
    // Data frames: PreambleEnd and two Heartbeats from the client, PreambleAck and two answers from the bridge, each
    // led by the 16-byte NTLM signature (version 1).
    const frames = [...dissection.matchAll(/NegotiateStream Protocol\n\s+Payload Size: (\d+)\n\s+Payload: (\w+)/g)];
    expect(frames.length).toBeGreaterThanOrEqual(6);
    expect(frames.slice(0, 2).map((f) => Number(f[1]))).toEqual([17, 17]); // 16-byte signature + one sealed record byte
    for (const frame of frames) expect(frame[2]!.startsWith('01000000')).toBe(true);
  });

  it('dissects as SPNEGO: negTokenInit offering NTLM, negTokenTarg answers with both mechListMICs', () => {
    expect(dissection).toMatch(/Simple Protected Negotiation/);
    expect(dissection).toMatch(/negTokenInit/);
    expect(dissection).toMatch(/MechType: 1\.3\.6\.1\.4\.1\.311\.2\.2\.10 \(NTLMSSP/);
    expect(count(dissection, /negTokenTarg$/gm)).toBe(3);
    expect(dissection).toMatch(/negResult: accept-incomplete/);
    expect(dissection).toMatch(/negResult: accept-completed/);
    expect(count(dissection, /mechListMIC: /g)).toBe(2);
  });

  it('dissects as NTLMSSP: NEGOTIATE, CHALLENGE and an NTLMv2 AUTHENTICATE from TESTDOM\\alice with a MIC', () => {
    expect(dissection).toMatch(/NTLM Message Type: NTLMSSP_NEGOTIATE/);
    expect(dissection).toMatch(/NTLM Message Type: NTLMSSP_CHALLENGE/);
    expect(dissection).toMatch(/NTLM Message Type: NTLMSSP_AUTH/);
    expect(dissection).toMatch(/User name: alice/);
    expect(dissection).toMatch(/Domain name: TESTDOM/);
    expect(dissection).toMatch(/NTLMv2 Response: /);
    expect(dissection).toMatch(/MIC: /);
    expect(dissection).toMatch(/Attribute: Timestamp/);
  });

  it('has no malformed packet, no error and no warning beyond TCP sequence analysis', () => {
    expect(dissection).not.toMatch(/Malformed Packet/);
    expect(dissection).not.toMatch(/Expert Info \(Error/);
    const warnings = [...dissection.matchAll(/Expert Info \(Warning\/(\w+)\): (.*)/g)].filter(
      (m) => m[1] !== 'Sequence',
    );
    expect(warnings.map((m) => m[0])).toEqual([]);
  });
});

function count(text: string, pattern: RegExp): number {
  return [...text.matchAll(pattern)].length;
}
