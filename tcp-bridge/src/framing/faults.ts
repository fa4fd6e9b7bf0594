/**
 * Framing refusals. A refusal that MC-NMF names carries its fault string; the server writes it as a Fault record and
 * closes, and the WCF client turns it into a specific exception (FaultStringDecoder.GetFaultException in
 * FramingDecoders.cs). Refusals the protocol has no string for (a record out of place, a malformed size, bytes after
 * the stream broke) carry none: WCF aborts the connection for those, and so should the caller.
 */

export const FRAMING_FAULT_NAMESPACE = 'http://schemas.microsoft.com/ws/2006/05/framing/faults/';

/** The fault names of FramingFormat.cs; each becomes FRAMING_FAULT_NAMESPACE + name on the wire. */
export type FramingFaultName =
  | 'ContentTypeInvalid'
  | 'ContentTypeTooLong'
  | 'ConnectionDispatchFailed'
  | 'EndpointNotFound'
  | 'EndpointUnavailable'
  | 'MaxMessageSizeExceededFault'
  | 'ServerTooBusy'
  | 'ServiceActivationFailed'
  | 'UnsupportedMode'
  | 'UnsupportedVersion'
  | 'UpgradeInvalid'
  | 'ViaTooLong';

/** Refusals without a fault string: the connection is aborted without a Fault record. */
export type FramingAbortReason =
  /** A record type that may not come at this point of the stream. */
  | 'UnexpectedRecord'
  /** A MultiByteInt31 with a bad fifth byte. */
  | 'InvalidSize'
  /** A via or content type that is not UTF-8. */
  | 'InvalidString'
  /** The stream ended inside a record or before the preamble was complete. */
  | 'PrematureEnd'
  /** Bytes pushed after a refusal or the end, or while the stream belongs to an upgrade. */
  | 'NotReading';

export type FramingFaultCode = FramingFaultName | FramingAbortReason;

const FAULT_NAMES: ReadonlySet<string> = new Set<FramingFaultName>([
  'ContentTypeInvalid',
  'ContentTypeTooLong',
  'ConnectionDispatchFailed',
  'EndpointNotFound',
  'EndpointUnavailable',
  'MaxMessageSizeExceededFault',
  'ServerTooBusy',
  'ServiceActivationFailed',
  'UnsupportedMode',
  'UnsupportedVersion',
  'UpgradeInvalid',
  'ViaTooLong',
]);

export function framingFaultString(name: FramingFaultName): string {
  return FRAMING_FAULT_NAMESPACE + name;
}

export class FramingFault extends Error {
  override readonly name = 'FramingFault';
  /** The string to send in a Fault record before closing; undefined: close without one. */
  readonly faultString: string | undefined;

  constructor(
    readonly code: FramingFaultCode,
    message: string,
    /** Bytes of the stream consumed before the refusal, counted from the decoder's first byte. */
    readonly position: number,
  ) {
    super(message);
    this.faultString = FAULT_NAMES.has(code) ? framingFaultString(code as FramingFaultName) : undefined;
  }
}
