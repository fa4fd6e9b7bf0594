/**
 * A sized-envelope payload of the binary session encoding (application/soap+msbinsession1): the MC-NBFSE string table,
 * then the MC-NBFX document that may refer to those strings and to every string the same side announced before.
 */

import { concatBytes } from '#idb';
import { ByteWriter } from '../bytes.ts';
import type { ReaderSession, WriterSession } from './dictionary.ts';
import type { XmlDocument } from './nodes.ts';
import { decodeDocument, type DecodeOptions } from './reader.ts';
import { encodeDocumentParts } from './writer.ts';

export interface DecodedEnvelope {
  /** The strings this envelope announced (they are in the session now). */
  strings: string[];
  document: XmlDocument;
}

/** Reads one envelope payload with the peer's session (one ReaderSession per connection direction). */
export function decodeEnvelope(
  payload: Uint8Array,
  session: ReaderSession,
  options: Omit<DecodeOptions, 'session'> = {},
): DecodedEnvelope {
  const { strings, documentOffset } = session.readTable(payload);
  const document = decodeDocument(payload.subarray(documentOffset), {
    ...options,
    session,
    offsetBase: documentOffset,
  });
  return { strings, document };
}

export interface EncodeEnvelopeOptions {
  /**
   * Strings to announce first, in this order, whether or not the document uses them (to replay a captured table;
   * a decoded tree's odd keys need them). Refused with SessionQuotaExceeded when the session has no room.
   */
  strings?: readonly string[];
  /** As for encodeDocument: find keys for names that have none (static dictionary, then new session strings). */
  useDictionaries?: boolean;
}

/** Writes one envelope payload with this side's session (one WriterSession per connection direction). */
export function encodeEnvelope(
  document: XmlDocument,
  session: WriterSession,
  options: EncodeEnvelopeOptions = {},
): Uint8Array {
  // At least two parts (the table, the document): a copy of its own.
  return concatBytes(encodeEnvelopeParts(document, session, options));
}

/**
 * encodeEnvelope's payload as its parts, the string table (with its size) and the document's (encodeDocumentParts),
 * so that a large document is sent as written instead of being copied behind the table, and a file's content not
 * at all: it goes from the store onto the socket as it was read (it was copied seven times on its way out).
 */
export function encodeEnvelopeParts(
  document: XmlDocument,
  session: WriterSession,
  options: EncodeEnvelopeOptions = {},
): Uint8Array[] {
  for (const value of options.strings ?? []) session.add(value);
  const body = encodeDocumentParts(document, {
    session,
    ...(options.useDictionaries === undefined ? {} : { useDictionaries: options.useDictionaries }),
  });
  // Strings added for an envelope that then failed to encode were never sent; they go out here, ids unchanged.
  return envelopeOf(body, session);
}

/**
 * A document that writes its own envelope payload, byte for byte as encodeEnvelopeParts would write it with the same
 * session (an operation's reply, from the pieces its session keeps of the replies before: soap/reply.ts).
 */
export interface EnvelopeWriting {
  encodeEnvelope(session: WriterSession): Uint8Array[];
}

/** The document's envelope payload in parts: its own writing where it has one, else encodeEnvelopeParts. */
export function encodeEnvelopeOf(
  document: XmlDocument & Partial<EnvelopeWriting>,
  session: WriterSession,
): Uint8Array[] {
  return document.encodeEnvelope === undefined
    ? encodeEnvelopeParts(document, session)
    : document.encodeEnvelope(session);
}

/**
 * The payload of a document already written (its parts, by the session): the strings added meanwhile announced
 * first, as encodeEnvelopeParts announces them.
 */
export function envelopeOf(body: readonly Uint8Array[], session: WriterSession): Uint8Array[] {
  const fresh = session.takeNew();
  // Most envelopes of a session announce nothing new: their table is its size, 0, and needs no writer.
  if (fresh.length === 0) return [EMPTY_TABLE, ...body];
  const table = new ByteWriter();
  for (const value of fresh) table.string(value);
  const tableBytes = table.written();
  return [new ByteWriter(tableBytes.length + 5).int31(tableBytes.length).bytes(tableBytes).written(), ...body];
}

/** A string table announcing nothing (never written to: callers only send it). */
const EMPTY_TABLE = Uint8Array.of(0);
