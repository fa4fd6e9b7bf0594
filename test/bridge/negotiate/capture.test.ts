/**
 * NegotiateStream against a real session: test/fixtures/nettcp/nns-spnego-ntlm.pcap, recorded by
 * test/fixtures/nettcp/record.ts: MIT's SPNEGO with gss-ntlmssp as initiator (test/support/negotiate/nns-client.py,
 * TESTDOM\alice) against the bridge with BRIDGE_NTLM_BACKEND=gssapi, whose CHALLENGE, session keys, signatures and
 * seals are gss-ntlmssp's (the SPNEGO wrapping of the server's tokens is ours, spnego.ts). The NNS framing is read byte
 * by byte and by TCP segment, the SPNEGO and NTLM tokens are decoded, and, the test password being known, the whole key
 * schedule is checked against gss-ntlmssp's bytes: the MIC, both mechListMICs (sequence 0, RC4 handle put back),
 * every data frame opened (sequence 1, 2, 3 each way), and the server's frames rewritten byte for byte by the
 * TypeScript session security.
 *
 * The first key-schedule check is the NTProofStr of the capture's AUTHENTICATE against the password, so a wrong one
 * fails loudly instead of skipping the rest.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HandshakeId, NnsDecoder, type NnsFrame } from '../../../tcp-bridge/src/negotiate/nns.ts';
import {
  AvId,
  computeMic,
  constantTimeEqual,
  exportedSessionKey,
  NtlmFlag,
  NtlmSessionSecurity,
  ntHash,
  ntowfv2,
  ntProofStr,
  parseAuthenticate,
  parseChallenge,
  parseNegotiate,
  parseNtlmV2Response,
  sessionBaseKey,
} from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import { OID } from '../../../tcp-bridge/src/negotiate/security-context.ts';
import {
  decodeNegTokenInit,
  decodeNegTokenResp,
  encodeNegTokenResp,
  NegState,
} from '../../../tcp-bridge/src/negotiate/spnego.ts';
import { chunked, readTcpConversation } from '../../support/nettcp/pcap.ts';

const PASSWORD = 'Secret123!';
const UPGRADE = new TextEncoder().encode('application/negotiate');
const utf16 = (bytes: Uint8Array): string => new TextDecoder('utf-16le').decode(bytes);

function afterUpgrade(stream: Uint8Array): Uint8Array {
  const at = Buffer.from(stream).indexOf(Buffer.from(UPGRADE));
  return stream.subarray(at + UPGRADE.length);
}

/** Decodes a side's NNS bytes fed in the given pieces: handshake frames until HandshakeDone (or 2 for the client). */
function nnsFrames(pieces: Uint8Array[], handshakeFrames: number): NnsFrame[] {
  const decoder = new NnsDecoder();
  const frames: NnsFrame[] = [];
  for (const piece of pieces) {
    decoder.push(piece);
    for (let frame = decoder.next(); frame; frame = decoder.next()) {
      frames.push(frame);
      if (frames.length === handshakeFrames) decoder.startData();
    }
  }
  expect(decoder.buffered).toBe(0);
  return frames;
}

describe('NegotiateStream on the captured SPNEGO/NTLM session', () => {
  const conversation = readTcpConversation(
    new Uint8Array(readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'nettcp', 'nns-spnego-ntlm.pcap'))),
  );
  const client = afterUpgrade(conversation.client);
  const server = conversation.server.subarray(1); // after UpgradeResponse (0x0a)
  const clientFrames = nnsFrames([client], 2);
  const serverFrames = nnsFrames([server], 2);
  const init = decodeNegTokenInit(clientFrames[0]!.payload);
  const challengeResp = decodeNegTokenResp(serverFrames[0]!.payload);
  const authenticateResp = decodeNegTokenResp(clientFrames[1]!.payload);
  const completed = decodeNegTokenResp(serverFrames[1]!.payload);
  const authenticate = parseAuthenticate(authenticateResp.responseToken!)!;
  const challenge = parseChallenge(challengeResp.responseToken!)!;
  const response = parseNtlmV2Response(authenticate.ntResponse)!;

  it('frames: two handshake frames each way, then three data frames each way, whatever the chunking', () => {
    expect(clientFrames.map((f) => [f.kind, f.kind === 'handshake' ? f.id : 0, f.payload.length])).toEqual([
      ['handshake', HandshakeId.InProgress, 0x4a],
      ['handshake', HandshakeId.InProgress, 0x15b],
      ['data', 0, 0x11],
      ['data', 0, 0xe9],
      ['data', 0, 0x11],
    ]);
    expect(serverFrames.map((f) => [f.kind, f.kind === 'handshake' ? f.id : 0, f.payload.length])).toEqual([
      ['handshake', HandshakeId.InProgress, 0xe7],
      ['handshake', HandshakeId.Done, 0x1d],
      ['data', 0, 0x11],
      ['data', 0, 0xad],
      ['data', 0, 0x11],
    ]);
    const byByte = nnsFrames(
      [...client].map((b) => Uint8Array.of(b)),
      2,
    );
    expect(byByte).toEqual(clientFrames);
    for (const sizes of [[2], [5, 1, 7], [64], [300, 3]])
      expect(nnsFrames(chunked(client, sizes), 2)).toEqual(clientFrames);
    const bySegment = nnsFrames(
      conversation.serverSegments.map((s, i) => (i === 0 ? s.subarray(1) : s)).filter((s) => s.length > 0),
      2,
    );
    expect(bySegment).toEqual(serverFrames);
  });

  it('SPNEGO: NegTokenInit with NTLM and its NEGOTIATE; the answers; AUTHENTICATE with a mechListMIC', () => {
    expect(init.mechTypes).toEqual([OID.ntlm]);
    expect([...init.mechTypesDer]).toEqual([
      0x30, 0x0c, 0x06, 0x0a, 0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a,
    ]);
    expect(parseNegotiate(init.mechToken!)!.flags >>> 0).toBe(0xe2088237);
    expect(challengeResp).toMatchObject({ negState: NegState.AcceptIncomplete, supportedMech: OID.ntlm });
    expect(authenticateResp.negState).toBe(NegState.AcceptIncomplete); // MIT's initiator says so; the acceptor ignores it
    expect(authenticateResp.mechListMIC).toHaveLength(16);
    expect(completed.negState).toBe(NegState.AcceptCompleted);
    expect(completed.responseToken).toBeUndefined();
    expect(completed.mechListMIC).toHaveLength(16);
    // asn1js writes the tokens byte for byte as they were sent: MIT's SPNEGO for the client's, spnego.ts for the server's.
    expect(encodeNegTokenResp(challengeResp)).toEqual(serverFrames[0]!.payload);
    expect(encodeNegTokenResp(completed)).toEqual(serverFrames[1]!.payload);
    expect(encodeNegTokenResp(authenticateResp)).toEqual(clientFrames[1]!.payload);
  });

  it('NTLM: the CHALLENGE and AUTHENTICATE as gss-ntlmssp wrote them (acceptor and initiator)', () => {
    expect(challenge.flags >>> 0).toBe(0xe28a8235);
    expect(challenge.flags & NtlmFlag.Seal).toBe(NtlmFlag.Seal);
    const serverTime = challenge.targetInfo.find((p) => p.id === AvId.Timestamp)!.value;
    expect(authenticate).toMatchObject({ domain: 'TESTDOM', user: 'alice' });
    expect(authenticate.lmResponse).toHaveLength(0); // no LMv2 response: the CHALLENGE had a timestamp
    expect(response.time).toBe(new DataView(serverTime.buffer, serverTime.byteOffset, 8).getBigUint64(0, true));
    const pairs = new Map(response.avPairs.map((p) => [p.id, p.value]));
    expect(pairs.get(AvId.Timestamp)).toEqual(serverTime);
    expect([...pairs.get(AvId.Flags)!]).toEqual([2, 0, 0, 0]); // MIC present
    expect(utf16(pairs.get(AvId.TargetName)!)).toBe('host/localhost');
    expect(pairs.has(AvId.ChannelBindings)).toBe(false); // raw TCP: none
  });

  it('the key schedule reproduces gss-ntlmssp: NTProofStr, MIC, mechListMICs, sealed frames', () => {
    const responseKey = ntowfv2(ntHash(PASSWORD), authenticate.user, authenticate.domain);
    expect(constantTimeEqual(ntProofStr(responseKey, challenge.serverChallenge, response.blob), response.proof)).toBe(
      true,
    );
    const exported = exportedSessionKey(
      sessionBaseKey(responseKey, response.proof),
      authenticate.encryptedRandomSessionKey,
    );
    expect(
      computeMic(exported, init.mechToken!, challengeResp.responseToken!, authenticateResp.responseToken!),
    ).toEqual(authenticate.mic);

    // The acceptor's view: verify the client's mechListMIC, make ours (equal to the capture's), open the client frames.
    const acceptor = new NtlmSessionSecurity(exported, 'server', true);
    acceptor.verifyMic(init.mechTypesDer, authenticateResp.mechListMIC!, { mechListMic: true });
    expect(acceptor.getMic(init.mechTypesDer, { mechListMic: true })).toEqual(completed.mechListMIC);
    const clientData = clientFrames.slice(2).map((f) => f.payload);
    expect(clientData.map((p) => [...p.subarray(12, 16)])).toEqual([
      [1, 0, 0, 0],
      [2, 0, 0, 0],
      [3, 0, 0, 0],
    ]);
    const plain = clientData.map((p) => acceptor.unwrap(p));
    expect(plain[0]).toEqual(Uint8Array.of(0x0c)); // PreambleEnd
    expect([...plain[1]!.subarray(0, 4)]).toEqual([0x06, 0xd6, 0x01, 0x1e]); // SizedEnvelope of 214 bytes, 30 of strings
    expect(plain[1]).toHaveLength(217);
    expect(plain[2]).toEqual(Uint8Array.of(0x07)); // End

    // The initiator's view opens the server frames; our acceptor, fed the same plaintext, writes the same bytes.
    const initiator = new NtlmSessionSecurity(exported, 'client', true);
    initiator.getMic(init.mechTypesDer, { mechListMic: true });
    initiator.verifyMic(init.mechTypesDer, completed.mechListMIC!, { mechListMic: true });
    const serverData = serverFrames.slice(2).map((f) => f.payload);
    const replies = serverData.map((p) => initiator.unwrap(p));
    expect(replies[0]).toEqual(Uint8Array.of(0x0b)); // PreambleAck
    expect([...replies[1]!.subarray(0, 3)]).toEqual([0x06, 0x9a, 0x01]); // the Heartbeat answer, 154 bytes
    const rewriter = new NtlmSessionSecurity(exported, 'server', true);
    rewriter.verifyMic(init.mechTypesDer, authenticateResp.mechListMIC!, { mechListMic: true });
    rewriter.getMic(init.mechTypesDer, { mechListMic: true });
    expect(replies.map((r) => rewriter.wrap(r))).toEqual(serverData);
  });

  it('a flipped byte in a captured frame does not open', () => {
    const responseKey = ntowfv2(ntHash(PASSWORD), authenticate.user, authenticate.domain);
    const exported = exportedSessionKey(
      sessionBaseKey(responseKey, response.proof),
      authenticate.encryptedRandomSessionKey,
    );
    const acceptor = new NtlmSessionSecurity(exported, 'server', true);
    acceptor.verifyMic(init.mechTypesDer, authenticateResp.mechListMIC!, { mechListMic: true });
    const frame = clientFrames[3]!.payload.slice();
    expect(acceptor.unwrap(clientFrames[2]!.payload)).toEqual(Uint8Array.of(0x0c));
    frame[100]! ^= 0x04;
    expect(() => acceptor.unwrap(frame)).toThrow(expect.objectContaining({ kind: 'BadSignature' }));
  });
});
