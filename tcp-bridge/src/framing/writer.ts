/**
 * MC-NMF record writer. The server sends PreambleAck, UpgradeResponse, SizedEnvelope, End and Fault; the client-side
 * records are here too so tests (and a future client) build streams with the same code.
 */

import { ByteWriter } from '../bytes.ts';
import { framingFaultString, type FramingFaultName } from './faults.ts';
import {
  BINARY_SESSION_ENCODING,
  FRAMING_MAJOR_VERSION,
  FRAMING_MINOR_VERSION,
  FramingMode,
  RecordType,
} from './records.ts';

export class FramingWriter {
  private readonly out = new ByteWriter();

  version(major = FRAMING_MAJOR_VERSION, minor = FRAMING_MINOR_VERSION): this {
    this.out.u8(RecordType.Version).u8(major).u8(minor);
    return this;
  }

  mode(mode: number = FramingMode.Duplex): this {
    this.out.u8(RecordType.Mode).u8(mode);
    return this;
  }

  via(via: string): this {
    this.out.u8(RecordType.Via).string(via);
    return this;
  }

  knownEncoding(encoding: number = BINARY_SESSION_ENCODING): this {
    this.out.u8(RecordType.KnownEncoding).u8(encoding);
    return this;
  }

  extensibleEncoding(contentType: string): this {
    this.out.u8(RecordType.ExtensibleEncoding).string(contentType);
    return this;
  }

  upgradeRequest(contentType: string): this {
    this.out.u8(RecordType.UpgradeRequest).string(contentType);
    return this;
  }

  upgradeResponse(): this {
    this.out.u8(RecordType.UpgradeResponse);
    return this;
  }

  preambleEnd(): this {
    this.out.u8(RecordType.PreambleEnd);
    return this;
  }

  preambleAck(): this {
    this.out.u8(RecordType.PreambleAck);
    return this;
  }

  sizedEnvelope(payload: Uint8Array): this {
    this.out.u8(RecordType.SizedEnvelope).int31(payload.length).bytes(payload);
    return this;
  }

  end(): this {
    this.out.u8(RecordType.End);
    return this;
  }

  /** A Fault record; pass a FramingFaultName for the standard string, or any full fault string. */
  fault(fault: FramingFaultName | (string & {})): this {
    const value = fault.includes(':') ? fault : framingFaultString(fault as FramingFaultName);
    this.out.u8(RecordType.Fault).string(value);
    return this;
  }

  /** Raw bytes, for streams a test wants to break on purpose. */
  raw(bytes: Uint8Array | readonly number[]): this {
    this.out.bytes(bytes instanceof Uint8Array ? bytes : Uint8Array.from(bytes));
    return this;
  }

  finish(): Uint8Array {
    return this.out.finish();
  }
}

export const framing = (): FramingWriter => new FramingWriter();

/** The client preamble of an unsecured NetTcpBinding session (what mono-none.pcap opens with). */
export function clientPreamble(via: string, upgrade?: string): Uint8Array {
  const w = framing().version().mode(FramingMode.Duplex).via(via).knownEncoding();
  if (upgrade !== undefined) return w.upgradeRequest(upgrade).finish();
  return w.preambleEnd().finish();
}

export const sizedEnvelope = (payload: Uint8Array): Uint8Array => framing().sizedEnvelope(payload).finish();
/** The SizedEnvelope record's type and size alone: a large payload then goes out as it is, without a copy. */
export const sizedEnvelopeHeader = (size: number): Uint8Array =>
  new ByteWriter().u8(RecordType.SizedEnvelope).int31(size).finish();
export const faultRecord = (fault: FramingFaultName | (string & {})): Uint8Array => framing().fault(fault).finish();
export const PREAMBLE_ACK: Uint8Array = Uint8Array.of(RecordType.PreambleAck);
export const UPGRADE_RESPONSE: Uint8Array = Uint8Array.of(RecordType.UpgradeResponse);
export const END_RECORD: Uint8Array = Uint8Array.of(RecordType.End);
