/**
 * MC-NMF (.NET Message Framing) record types and values, as FramingFormat.cs in microsoft/referencesource names them.
 */

export const RecordType = {
  Version: 0x00,
  Mode: 0x01,
  Via: 0x02,
  KnownEncoding: 0x03,
  ExtensibleEncoding: 0x04,
  UnsizedEnvelope: 0x05,
  SizedEnvelope: 0x06,
  End: 0x07,
  Fault: 0x08,
  UpgradeRequest: 0x09,
  UpgradeResponse: 0x0a,
  PreambleAck: 0x0b,
  PreambleEnd: 0x0c,
} as const;

export const FramingMode = {
  Singleton: 0x01,
  Duplex: 0x02,
  Simplex: 0x03,
  SingletonSized: 0x04,
} as const;

export const FRAMING_MAJOR_VERSION = 1;
export const FRAMING_MINOR_VERSION = 0;

/** KnownEncoding values and the content types they stand for (MC-NMF 2.2.3.4.1). */
export const KNOWN_ENCODINGS: readonly string[] = [
  'text/xml; charset=utf-8',
  'text/xml; charset=utf16',
  'text/xml; charset=unicodeFFFE',
  'application/soap+xml; charset=utf-8',
  'application/soap+xml; charset=utf16',
  'application/soap+xml; charset=unicodeFFFE',
  'multipart/related',
  'application/soap+msbin1',
  'application/soap+msbinsession1',
];

/** NetTcpBinding's encoding: binary XML with the in-band session dictionary (MC-NBFSE). */
export const BINARY_SESSION_ENCODING = 0x08;
export const BINARY_SESSION_CONTENT_TYPE = 'application/soap+msbinsession1';

/** The upgrade content type of Windows transport security (MS-NNS follows). */
export const NEGOTIATE_UPGRADE = 'application/negotiate';
export const SSL_TLS_UPGRADE = 'application/ssl-tls';

/** WCF's defaults (TransportDefaults.cs), except the message size, which docs/contract/iidbservice.md sets to 64 MiB. */
export const DEFAULT_MAX_VIA_LENGTH = 2048;
export const DEFAULT_MAX_CONTENT_TYPE_LENGTH = 256;
export const DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024;
