/**
 * SPNEGO (RFC 4178, with MS-SPNG's rules for NTLM) on the acceptor side, over the mechanisms the backends offer. The
 * tokens are read and written by spnego-tokens.ts (re-exported here, the module the rest of the bridge imports).
 *
 * Decisions:
 * - The mechanism is the first of the initiator's list that a backend offers (the initiator's preference, as Windows
 *   and MIT choose). When it is not the initiator's first choice the optimistic token is ignored, the first answer
 *   carries `request-mic` and no token, and the mechListMIC becomes mandatory (RFC 4178 section 5).
 * - The mechListMIC is checked over the MechTypeList exactly as the client's bytes had it. It is mandatory when the
 *   mechanism says so (NTLM, whose AUTHENTICATE carries a MIC: MS-SPNG 3.1.5.1) or the choice was not the first; then a
 *   client that completes its mechanism without one is refused. The answer carries the acceptor's mechListMIC whenever
 *   the client sent one or it is mandatory.
 * - For NTLM both MICs use sequence number 0 and the RC4 handles are put back afterwards (MS-SPNG 3.3.5.1), through
 *   `MicOptions.mechListMic`; so the first data frame carries sequence number 1 in each direction.
 * - Raw tokens without SPNEGO: an NTLM NEGOTIATE message (`NTLMSSP\0`) goes straight to the NTLM backend, as .NET's
 *   NegotiateStream sends when a client asks for ProtectionLevel.None (it then picks the NTLM package), and a GSS
 *   Kerberos token to a backend offering Kerberos. Their contexts run without mechListMIC, so NTLM data frames start
 *   at sequence number 0 there.
 */

import {
  IntegrityError,
  NegotiateError,
  OID,
  type AcceptorInfo,
  type MechanismContext,
  type MicOptions,
  type SecurityBackend,
  type SecurityContext,
  type StepResult,
} from './security-context.ts';
import {
  decodeNegTokenInit,
  decodeNegTokenResp,
  encodeNegTokenResp,
  isNtlmToken,
  NegState,
  type NegTokenInit,
  type NegTokenResp,
  readInitialContextToken,
  SpnegoError,
} from './spnego-tokens.ts';

export * from './spnego-tokens.ts';

// ---- the acceptor ----

/** Equivalent spellings of one mechanism: Windows lists Kerberos under Microsoft's OID first. */
function sameMechanism(a: string, b: string): boolean {
  const kerberos = (oid: string): boolean => oid === OID.kerberos || oid === OID.kerberosMicrosoft;
  return a === b || (kerberos(a) && kerberos(b));
}

function backendFor(backends: readonly SecurityBackend[], mechanism: string): SecurityBackend | undefined {
  return backends.find((backend) => backend.mechanisms.some((offered) => sameMechanism(offered, mechanism)));
}

type SpnegoState = 'init' | 'mech' | 'mic' | 'done' | 'failed';

/** SPNEGO over one backend mechanism, as a SecurityContext of its own. */
export class SpnegoAcceptor implements SecurityContext {
  private state: SpnegoState = 'init';
  private mech: MechanismContext | undefined;
  private mechTypesDer: Uint8Array | undefined;
  private micRequired = false;

  constructor(
    private readonly backends: readonly SecurityBackend[],
    private readonly info: AcceptorInfo,
  ) {}

  get mechanism(): string | undefined {
    return this.mech?.mechanism;
  }

  get established(): boolean {
    return this.state === 'done';
  }

  get peerName(): string | undefined {
    return this.established ? this.mech?.peerName : undefined;
  }

  get peerSids(): readonly string[] {
    return (this.established ? this.mech?.peerSids : undefined) ?? [];
  }

  get confidentiality(): boolean {
    return this.established && this.mech!.confidentiality;
  }

  get integrity(): boolean {
    return this.established && this.mech!.integrity;
  }

  get wrapOverhead(): number {
    return this.mech?.wrapOverhead ?? 0;
  }

  async step(token: Uint8Array): Promise<StepResult> {
    try {
      switch (this.state) {
        case 'init':
          return await this.first(decodeNegTokenInit(token));
        case 'mech':
          return await this.next(decodeNegTokenResp(token));
        case 'mic':
          return this.lastMic(decodeNegTokenResp(token));
        default:
          throw new NegotiateError('spnego.state', `no token expected in state ${this.state}`);
      }
    } catch (error) {
      this.state = 'failed';
      this.mech?.dispose();
      if (error instanceof NegotiateError) throw error;
      if (error instanceof SpnegoError) throw new NegotiateError('spnego.malformed', error.message);
      if (error instanceof IntegrityError) throw new NegotiateError('spnego.bad-mechlistmic', error.message);
      throw new NegotiateError('spnego.failed', String(error));
    }
  }

  private async first(init: NegTokenInit): Promise<StepResult> {
    const preferred = init.mechTypes[0]!;
    const chosen = init.mechTypes.find((oid) => backendFor(this.backends, oid) !== undefined);
    if (chosen === undefined) throw new NegotiateError('spnego.no-common-mechanism', init.mechTypes.join(' '));
    this.mech = backendFor(this.backends, chosen)!.createContext(chosen, this.info);
    this.mechTypesDer = init.mechTypesDer;
    const isPreferred = chosen === preferred;
    this.micRequired = !isPreferred || this.mech.requireMechListMic;
    this.state = 'mech';
    if (!isPreferred || init.mechToken === undefined) {
      // The optimistic token (if any) was for another mechanism: ask for this one's first token.
      return {
        token: encodeNegTokenResp({
          negState: isPreferred ? NegState.AcceptIncomplete : NegState.RequestMic,
          supportedMech: chosen,
        }),
        done: false,
      };
    }
    const result = await this.mech.step(init.mechToken);
    if (result.done) return this.complete(result.token, init.mechListMIC, chosen);
    if (init.mechListMIC !== undefined)
      throw new NegotiateError('spnego.early-mic', 'mechListMIC before the mechanism completed');
    return {
      token: encodeNegTokenResp({
        negState: NegState.AcceptIncomplete,
        supportedMech: chosen,
        responseToken: result.token ?? new Uint8Array(0),
      }),
      done: false,
    };
  }

  private async next(resp: NegTokenResp): Promise<StepResult> {
    if (resp.negState === NegState.Reject) throw new NegotiateError('spnego.client-reject');
    if (resp.supportedMech !== undefined)
      throw new NegotiateError('spnego.malformed', 'supportedMech from the initiator');
    if (resp.responseToken === undefined) throw new NegotiateError('spnego.malformed', 'no responseToken');
    const result = await this.mech!.step(resp.responseToken);
    if (result.done) return this.complete(result.token, resp.mechListMIC);
    if (resp.mechListMIC !== undefined)
      throw new NegotiateError('spnego.early-mic', 'mechListMIC before the mechanism completed');
    return {
      token: encodeNegTokenResp({
        negState: NegState.AcceptIncomplete,
        responseToken: result.token ?? new Uint8Array(0),
      }),
      done: false,
    };
  }

  /** The mechanism is established on this side; settle the mechListMICs. */
  private complete(
    mechToken: Uint8Array | undefined,
    clientMic: Uint8Array | undefined,
    supportedMech?: string,
  ): StepResult {
    const mech = this.mech!;
    const micOptions: MicOptions = { mechListMic: true };
    if (clientMic !== undefined) {
      mech.verifyMic(this.mechTypesDer!, clientMic, micOptions);
    } else if (this.micRequired) {
      if (mechToken === undefined || mechToken.length === 0) {
        // The client's mechanism is complete too, so its mechListMIC belonged in this message.
        throw new NegotiateError('spnego.mic-missing', `no mechListMIC for ${mech.mechanism}`);
      }
      // The client still has to process our token (Kerberos mutual authentication): send our MIC, await theirs.
      this.state = 'mic';
      const token = encodeNegTokenResp({
        negState: NegState.AcceptIncomplete,
        supportedMech,
        responseToken: mechToken,
        mechListMIC: mech.getMic(this.mechTypesDer!, micOptions),
      });
      return { token, done: false };
    }
    const ourMic =
      clientMic !== undefined || this.micRequired ? mech.getMic(this.mechTypesDer!, micOptions) : undefined;
    this.state = 'done';
    return {
      token: encodeNegTokenResp({
        negState: NegState.AcceptCompleted,
        supportedMech,
        responseToken: mechToken,
        mechListMIC: ourMic,
      }),
      done: true,
    };
  }

  /** After we sent our mechListMIC ahead of the client's: the client's alone completes the exchange. */
  private lastMic(resp: NegTokenResp): StepResult {
    if (resp.negState === NegState.Reject) throw new NegotiateError('spnego.client-reject');
    if (resp.mechListMIC === undefined || resp.responseToken !== undefined)
      throw new NegotiateError('spnego.mic-missing', 'the final token holds no mechListMIC');
    this.mech!.verifyMic(this.mechTypesDer!, resp.mechListMIC, { mechListMic: true });
    this.state = 'done';
    return { done: true };
  }

  getMic(message: Uint8Array, options?: MicOptions): Uint8Array {
    return this.ready().getMic(message, options);
  }

  verifyMic(message: Uint8Array, mic: Uint8Array, options?: MicOptions): void {
    this.ready().verifyMic(message, mic, options);
  }

  wrap(plain: Uint8Array): Uint8Array {
    return this.ready().wrap(plain);
  }

  unwrap(payload: Uint8Array): Uint8Array {
    return this.ready().unwrap(payload);
  }

  dispose(): void {
    this.mech?.dispose();
  }

  private ready(): MechanismContext {
    if (this.state !== 'done') throw new IntegrityError('Broken', 'the SPNEGO context is not established');
    return this.mech!;
  }
}

/**
 * The acceptor for a client's first token: SPNEGO, or a raw NTLM or Kerberos token handed straight to a backend
 * offering that mechanism. Throws NegotiateError for anything else.
 */
export function createAcceptor(
  firstToken: Uint8Array,
  backends: readonly SecurityBackend[],
  info: AcceptorInfo,
): SecurityContext {
  if (isNtlmToken(firstToken)) {
    const backend = backendFor(backends, OID.ntlm);
    if (backend === undefined) throw new NegotiateError('raw.unsupported', 'raw NTLM, and no backend offers NTLM');
    return backend.createContext(OID.ntlm, info);
  }
  let mechanism: string;
  try {
    mechanism = readInitialContextToken(firstToken).mechanism;
  } catch (error) {
    throw new NegotiateError('token.unknown', error instanceof Error ? error.message : String(error));
  }
  if (mechanism === OID.spnego) return new SpnegoAcceptor(backends, info);
  const backend = backendFor(backends, mechanism);
  if (backend === undefined)
    throw new NegotiateError('raw.unsupported', `raw ${mechanism} token, and no backend offers it`);
  return backend.createContext(mechanism, info);
}
