/**
 * The one error the binary XML layers throw for bad input (and for documents the writer cannot encode). Callers map
 * it to a SOAP or framing reaction; nothing else escapes the readers.
 */

export type BinaryXmlErrorCode =
  /** The bytes end inside a record, or elements are still open at the end. */
  | 'Truncated'
  /** A record type that does not exist, or may not come at this point. */
  | 'InvalidRecord'
  /** A field value the format does not allow (bad MultiByteInt31, odd UTF-16 length, scale above 28, …). */
  | 'InvalidValue'
  /** A string that is not UTF-8. */
  | 'InvalidUtf8'
  /** A dictionary reference to a string neither the static nor the session dictionary holds. */
  | 'UnknownDictionaryString'
  /** A prefix no enclosing element declares. */
  | 'UndeclaredPrefix'
  /** More nesting or more records than the reader's limits allow. */
  | 'QuotaExceeded'
  /** MC-NBFSE: the peer's session strings would pass the session size (2048 bytes by default, WCF's MaxSessionSize). */
  | 'SessionQuotaExceeded'
  /** MC-NBFSE: a string table that does not fit its envelope, or a session that an earlier bad table spoiled. */
  | 'InvalidSession'
  /** The writer was handed a tree it cannot put into records (a value out of range for its record type, …). */
  | 'InvalidDocument';

export class BinaryXmlError extends Error {
  override readonly name = 'BinaryXmlError';

  constructor(
    readonly code: BinaryXmlErrorCode,
    message: string,
    /** Offset in the decoded bytes where the problem was found; -1 for writer errors. */
    readonly offset = -1,
  ) {
    super(offset >= 0 ? `${message} (at byte ${offset})` : message);
  }
}
