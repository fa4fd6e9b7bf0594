/**
 * The parties of the in-memory negotiate tests (spnego.test.ts, stream.test.ts): the NTLM backend the bridge offers, an
 * SPNEGO/NTLM initiator, and a stand-in one-round mechanism.
 */
import { expect } from 'vitest';
import { LogonThrottle, NtlmAccounts, NtlmBackend } from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import {
  IntegrityError,
  NegotiateError,
  normalizePeerName,
  OID,
  type AcceptorInfo,
  type MechanismContext,
  type SecurityBackend,
  type StepResult,
} from '../../../tcp-bridge/src/negotiate/security-context.ts';
import {
  decodeNegTokenResp,
  encodeMechTypes,
  encodeNegTokenInit,
  encodeNegTokenResp,
  NegState,
} from '../../../tcp-bridge/src/negotiate/spnego.ts';
import { TestNtlmClient } from '../../support/negotiate/ntlm-client.ts';
import { ascii } from '../../support/negotiate/negotiate.ts';

export function ntlmBackend(): NtlmBackend {
  return new NtlmBackend({
    accounts: NtlmAccounts.parse('TESTDOM:alice:Secret1!\n'),
    dnsIdentity: 'localhost',
    throttle: new LogonThrottle({ perUser: 1000, perAddress: 1000 }),
  });
}

export const INFO: AcceptorInfo = { remoteAddress: '192.0.2.1', protectionLevel: 'EncryptAndSign' };

/** The client side of SPNEGO/NTLM, as gss-ntlmssp under MIT SPNEGO does it. */
export class SpnegoNtlmClient {
  readonly ntlm: TestNtlmClient;

  constructor(
    password = 'Secret1!',
    readonly mechTypes: string[] = [OID.ntlm],
  ) {
    this.ntlm = new TestNtlmClient('alice', 'TESTDOM', password);
  }

  init(optimistic = true): Uint8Array {
    return encodeNegTokenInit({
      mechTypes: this.mechTypes,
      mechToken: optimistic ? this.ntlm.negotiate() : new Uint8Array([0x6e, 0]),
    });
  }

  authenticate(challengeResp: Uint8Array, options: { mic?: 'none' | 'bad' } = {}): Uint8Array {
    const resp = decodeNegTokenResp(challengeResp);
    const auth = this.ntlm.authenticate(resp.responseToken!);
    const der = encodeMechTypes(this.mechTypes);
    const mic = this.ntlm.security!.getMic(der, { mechListMic: true });
    if (options.mic === 'bad') mic[3]! ^= 1;
    return encodeNegTokenResp({ responseToken: auth, mechListMIC: options.mic === 'none' ? undefined : mic });
  }

  finish(done: Uint8Array): void {
    const resp = decodeNegTokenResp(done);
    expect(resp.negState).toBe(NegState.AcceptCompleted);
    this.ntlm.security!.verifyMic(encodeMechTypes(this.mechTypes), resp.mechListMIC!, { mechListMic: true });
  }
}

/**
 * A stand-in for a Kerberos-like backend (the GSSAPI backend will be one): it completes on the client's first token
 * with a token of its own (mutual authentication), signs MICs with a counter, and wraps by prefixing a marker.
 */
export class FakeMechanism implements MechanismContext {
  readonly mechanism = OID.kerberos;
  readonly wrapOverhead = 4;
  established = false;
  micCount = 0;
  constructor(
    readonly requireMechListMic: boolean,
    readonly confidentiality = true,
  ) {}
  get integrity(): boolean {
    return this.established;
  }
  get peerName(): string | undefined {
    return this.established ? normalizePeerName('alice@test.local') : undefined;
  }
  async step(token: Uint8Array): Promise<StepResult> {
    if (new TextDecoder().decode(token) !== 'AP-REQ') throw new NegotiateError('fake.bad-token');
    this.established = true;
    return { token: ascii('AP-REP'), done: true };
  }
  getMic(message: Uint8Array): Uint8Array {
    return ascii(`mic${message.length}`);
  }
  verifyMic(message: Uint8Array, mic: Uint8Array): void {
    if (new TextDecoder().decode(mic) !== `mic${message.length}`) throw new IntegrityError('BadSignature', 'fake MIC');
    this.micCount++;
  }
  wrap(plain: Uint8Array): Uint8Array {
    return new Uint8Array([...ascii('WRAP'), ...plain]);
  }
  unwrap(payload: Uint8Array): Uint8Array {
    if (new TextDecoder().decode(payload.subarray(0, 4)) !== 'WRAP')
      throw new IntegrityError('BadSignature', 'fake wrap');
    return payload.slice(4);
  }
  dispose(): void {}
}

export const fakeBackend = (mech: FakeMechanism): SecurityBackend => ({
  name: 'fake',
  mechanisms: [OID.kerberos],
  createContext: () => mech,
  close: () => {},
});
