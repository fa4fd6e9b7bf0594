/**
 * SPNEGO's tokens (RFC 4178 section 4.2), read and written: the initiator's NegTokenInit, both sides' NegTokenResp,
 * the MechTypeList a mechListMIC signs, and the RFC 2743 section 3.1 initial context token that wraps them. The
 * acceptor that uses them is spnego.ts.
 *
 * The tokens are DER, read and written with asn1js; nothing here parses ASN.1 by hand except the RFC 2743 framing of
 * an initial context token (tag 0x60 and a length before the mechanism OID), which also wraps Kerberos tokens whose
 * inner part is not DER.
 *
 *   NegotiationToken ::= CHOICE { negTokenInit [0] NegTokenInit, negTokenResp [1] NegTokenResp }
 *   NegTokenInit ::= SEQUENCE { mechTypes [0] MechTypeList, reqFlags [1] ContextFlags OPTIONAL,
 *                               mechToken [2] OCTET STRING OPTIONAL, mechListMIC [3] OCTET STRING OPTIONAL }
 *   NegTokenResp ::= SEQUENCE { negState [0] ENUMERATED OPTIONAL, supportedMech [1] MechType OPTIONAL,
 *                               responseToken [2] OCTET STRING OPTIONAL, mechListMIC [3] OCTET STRING OPTIONAL }
 *
 * Decision: strict reading: definite lengths only, fields in order and each at most once, nothing after the token. An
 * initiator has no reason to send anything else, and a lenient reader only widens what an attacker can try.
 */

import {
  type BitString,
  Constructed,
  Enumerated,
  fromBER,
  ObjectIdentifier,
  OctetString,
  Sequence,
  type AsnType,
} from 'asn1js';
import { OID } from './security-context.ts';

export const NegState = {
  AcceptCompleted: 0,
  AcceptIncomplete: 1,
  Reject: 2,
  RequestMic: 3,
} as const;
export type NegStateValue = (typeof NegState)[keyof typeof NegState];

export interface NegTokenInit {
  kind: 'init';
  mechTypes: string[];
  /** The DER of the MechTypeList as received: what mechListMIC signs. */
  mechTypesDer: Uint8Array;
  reqFlags?: Uint8Array;
  mechToken?: Uint8Array;
  mechListMIC?: Uint8Array;
}

export interface NegTokenResp {
  kind: 'resp';
  negState?: NegStateValue;
  supportedMech?: string;
  responseToken?: Uint8Array;
  mechListMIC?: Uint8Array;
}

/** A token that is not SPNEGO as RFC 4178 writes it. */
export class SpnegoError extends Error {
  override name = 'SpnegoError';
}

const UNIVERSAL = 1;
const APPLICATION = 2;
const CONTEXT = 3;
const TAG = { bitString: 3, octetString: 4, oid: 6, enumerated: 10, sequence: 16 } as const;

const NTLMSSP = [0x4e, 0x54, 0x4c, 0x4d, 0x53, 0x53, 0x50, 0x00];

// ---- the RFC 2743 initial context token ----

/** Splits an initial context token (`60 len OID inner`) into its mechanism OID and inner token. */
export function readInitialContextToken(token: Uint8Array): { mechanism: string; inner: Uint8Array } {
  if (token[0] !== 0x60) throw new SpnegoError('not an initial context token (tag 0x60)');
  const length = readLength(token, 1);
  if (length.value !== token.length - length.next)
    throw new SpnegoError('the initial context token length does not match');
  const { offset, result } = fromBER(token.subarray(length.next));
  if (offset === -1 || result.error !== '' || !isTag(result, UNIVERSAL, TAG.oid) || result.lenBlock.isIndefiniteForm) {
    throw new SpnegoError('the initial context token does not start with a mechanism OID');
  }
  return { mechanism: (result as ObjectIdentifier).valueBlock.toString(), inner: token.subarray(length.next + offset) };
}

/** BER definite length at `at` (the byte after the tag). */
function readLength(bytes: Uint8Array, at: number): { value: number; next: number } {
  const first = bytes[at];
  if (first === undefined) throw new SpnegoError('truncated length');
  if (first < 0x80) return { value: first, next: at + 1 };
  const count = first & 0x7f;
  if (count === 0 || count > 3) throw new SpnegoError('indefinite or oversized length');
  let value = 0;
  for (let i = 1; i <= count; i++) {
    const b = bytes[at + i];
    if (b === undefined) throw new SpnegoError('truncated length');
    value = value * 256 + b;
  }
  return { value, next: at + 1 + count };
}

export function isNtlmToken(token: Uint8Array): boolean {
  return token.length >= 8 && NTLMSSP.every((b, i) => token[i] === b);
}

// ---- reading ----

/** Reads the initiator's first token: `60 … 1.3.6.1.5.5.2 [0] NegTokenInit`. */
export function decodeNegTokenInit(token: Uint8Array): NegTokenInit {
  const { mechanism, inner } = readInitialContextToken(token);
  if (mechanism !== OID.spnego) throw new SpnegoError(`initial token for ${mechanism}, not SPNEGO`);
  const choice = decodeStrict(inner);
  const body = explicitContent(choice, 0, 'negTokenInit');
  const fields = sequenceFields(body, 'NegTokenInit', 3);
  const mechList = fields.get(0);
  if (mechList === undefined) throw new SpnegoError('NegTokenInit without mechTypes');
  const list = explicitContent(mechList, 0, 'mechTypes');
  if (!isTag(list, UNIVERSAL, TAG.sequence)) throw new SpnegoError('mechTypes is not a SEQUENCE');
  const mechTypes = children(list).map((item) => oidValue(item, 'mechTypes'));
  if (mechTypes.length === 0) throw new SpnegoError('empty mechTypes');
  const out: NegTokenInit = { kind: 'init', mechTypes, mechTypesDer: list.valueBeforeDecodeView.slice() };
  const reqFlags = fields.get(1);
  if (reqFlags !== undefined) {
    const bits = explicitContent(reqFlags, 1, 'reqFlags');
    if (!isTag(bits, UNIVERSAL, TAG.bitString) || bits.idBlock.isConstructed)
      throw new SpnegoError('reqFlags is not a BIT STRING');
    out.reqFlags = (bits as BitString).valueBlock.valueHexView.slice();
  }
  const mechToken = fields.get(2);
  if (mechToken !== undefined) out.mechToken = octets(explicitContent(mechToken, 2, 'mechToken'), 'mechToken');
  const mic = fields.get(3);
  if (mic !== undefined) out.mechListMIC = octets(explicitContent(mic, 3, 'mechListMIC'), 'mechListMIC');
  return out;
}

/** Reads a later token: `[1] NegTokenResp`. */
export function decodeNegTokenResp(token: Uint8Array): NegTokenResp {
  const choice = decodeStrict(token);
  const body = explicitContent(choice, 1, 'negTokenResp');
  const fields = sequenceFields(body, 'NegTokenResp', 3);
  const out: NegTokenResp = { kind: 'resp' };
  const negState = fields.get(0);
  if (negState !== undefined) {
    const value = explicitContent(negState, 0, 'negState');
    if (!isTag(value, UNIVERSAL, TAG.enumerated) || value.idBlock.isConstructed)
      throw new SpnegoError('negState is not an ENUMERATED');
    const state = (value as Enumerated).valueBlock.valueDec;
    if (state < 0 || state > 3) throw new SpnegoError(`negState ${state}`);
    out.negState = state as NegStateValue;
  }
  const mech = fields.get(1);
  if (mech !== undefined) out.supportedMech = oidValue(explicitContent(mech, 1, 'supportedMech'), 'supportedMech');
  const responseToken = fields.get(2);
  if (responseToken !== undefined)
    out.responseToken = octets(explicitContent(responseToken, 2, 'responseToken'), 'responseToken');
  const mic = fields.get(3);
  if (mic !== undefined) out.mechListMIC = octets(explicitContent(mic, 3, 'mechListMIC'), 'mechListMIC');
  return out;
}

function decodeStrict(bytes: Uint8Array): AsnType {
  const { offset, result } = fromBER(bytes);
  if (offset === -1 || result.error !== '') throw new SpnegoError(`not DER: ${result.error || 'unreadable'}`);
  if (offset !== bytes.length) throw new SpnegoError(`${bytes.length - offset} bytes after the token`);
  const walk = (node: AsnType): void => {
    if (node.lenBlock.isIndefiniteForm) throw new SpnegoError('indefinite length');
    for (const child of children(node)) walk(child);
  };
  walk(result);
  return result;
}

function isTag(node: AsnType, tagClass: number, tagNumber: number): boolean {
  return node.idBlock.tagClass === tagClass && node.idBlock.tagNumber === tagNumber;
}

function children(node: AsnType): AsnType[] {
  if (!node.idBlock.isConstructed) return [];
  const value = (node.valueBlock as { value?: unknown }).value;
  return Array.isArray(value) ? (value as AsnType[]) : [];
}

/** The single element inside an explicit context tag `[n]`. */
function explicitContent(node: AsnType, tagNumber: number, what: string): AsnType {
  if (!isTag(node, CONTEXT, tagNumber) || !node.idBlock.isConstructed)
    throw new SpnegoError(`${what}: [${tagNumber}] expected`);
  const inner = children(node);
  if (inner.length !== 1) throw new SpnegoError(`${what}: one element expected inside [${tagNumber}]`);
  return inner[0]!;
}

/** A SEQUENCE of explicitly tagged fields [0]..[max], in order, each at most once. */
function sequenceFields(node: AsnType, what: string, max: number): Map<number, AsnType> {
  if (!isTag(node, UNIVERSAL, TAG.sequence)) throw new SpnegoError(`${what} is not a SEQUENCE`);
  const fields = new Map<number, AsnType>();
  let last = -1;
  for (const field of children(node)) {
    const tag = field.idBlock.tagNumber;
    if (field.idBlock.tagClass !== CONTEXT || tag > max || tag <= last)
      throw new SpnegoError(`${what}: unexpected field [${tag}]`);
    fields.set(tag, field);
    last = tag;
  }
  return fields;
}

function oidValue(node: AsnType, what: string): string {
  if (!isTag(node, UNIVERSAL, TAG.oid) || node.idBlock.isConstructed)
    throw new SpnegoError(`${what}: OBJECT IDENTIFIER expected`);
  return (node as ObjectIdentifier).valueBlock.toString();
}

function octets(node: AsnType, what: string): Uint8Array {
  if (!isTag(node, UNIVERSAL, TAG.octetString) || node.idBlock.isConstructed)
    throw new SpnegoError(`${what}: OCTET STRING expected`);
  return (node as OctetString).valueBlock.valueHexView.slice();
}

// ---- writing ----

const tagged = (tagNumber: number, value: AsnType): Constructed =>
  new Constructed({ idBlock: { tagClass: CONTEXT, tagNumber }, value: [value] });
const octetString = (bytes: Uint8Array): OctetString => new OctetString({ valueHex: bytes.slice() });

export function encodeNegTokenResp(resp: Omit<NegTokenResp, 'kind'>): Uint8Array {
  const fields: AsnType[] = [];
  if (resp.negState !== undefined) fields.push(tagged(0, new Enumerated({ value: resp.negState })));
  if (resp.supportedMech !== undefined) fields.push(tagged(1, new ObjectIdentifier({ value: resp.supportedMech })));
  if (resp.responseToken !== undefined) fields.push(tagged(2, octetString(resp.responseToken)));
  if (resp.mechListMIC !== undefined) fields.push(tagged(3, octetString(resp.mechListMIC)));
  return new Uint8Array(tagged(1, new Sequence({ value: fields })).toBER());
}

/** The DER of a MechTypeList (what a mechListMIC signs). */
export function encodeMechTypes(mechTypes: readonly string[]): Uint8Array {
  return new Uint8Array(new Sequence({ value: mechTypes.map((oid) => new ObjectIdentifier({ value: oid })) }).toBER());
}

/** An initiator's first token (for tests and tools: the bridge only reads these). */
export function encodeNegTokenInit(init: {
  mechTypes: readonly string[];
  mechToken?: Uint8Array;
  mechListMIC?: Uint8Array;
}): Uint8Array {
  const fields: AsnType[] = [
    tagged(0, new Sequence({ value: init.mechTypes.map((oid) => new ObjectIdentifier({ value: oid })) })),
  ];
  if (init.mechToken !== undefined) fields.push(tagged(2, octetString(init.mechToken)));
  if (init.mechListMIC !== undefined) fields.push(tagged(3, octetString(init.mechListMIC)));
  const token = new Constructed({
    idBlock: { tagClass: APPLICATION, tagNumber: 0 },
    value: [new ObjectIdentifier({ value: OID.spnego }), tagged(0, new Sequence({ value: fields }))],
  });
  return new Uint8Array(token.toBER());
}
