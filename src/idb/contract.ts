/**
 * The IIDBService contract as the handlers see it (docs/contract/iidbservice.md): the 13 operations, their DataContract
 * shapes, the values an `object` member carries, the faults, and who may call what. Transport-free: the SOAP layer of
 * the tcp-bridge decodes into these types and encodes them back; the WSDL (wsdl.ts) describes the same operations.
 */
import type { XmlEventSource } from './xml-events.ts';

/** The operations in the contract's order; also the names of their actions. */
export const OPERATIONS = [
  'Heartbeat',
  'CreateDatabaseRequest',
  'CloseDatabaseRequest',
  'ReturnDatatable',
  'ReturnScalar',
  'ExecuteNonQuery',
  'NewFile',
  'UpdateFile',
  'GetFile',
  'DeleteFile',
  'GetDocumentByDocumentId',
  'GetDocumentByContainerId',
  'NewFileIndex',
] as const;

export type OperationName = (typeof OPERATIONS)[number];

/**
 * The role an operation needs ("Rules users rely on"): `reader` for the ones that only read, `writer` for the rest.
 * Heartbeat needs none (docs/contract/operations.md: with no roles file nobody is authorized "for anything but
 * Heartbeat"). A writer may do everything a reader may. Database requests are units of work for writers, even when only
 * read through.
 */
export const REQUIRED_ROLE: Readonly<Record<OperationName, 'none' | 'reader' | 'writer'>> = {
  Heartbeat: 'none',
  CreateDatabaseRequest: 'writer',
  CloseDatabaseRequest: 'writer',
  ReturnDatatable: 'reader',
  ReturnScalar: 'reader',
  ExecuteNonQuery: 'writer',
  NewFile: 'writer',
  UpdateFile: 'writer',
  GetFile: 'reader',
  DeleteFile: 'writer',
  GetDocumentByDocumentId: 'reader',
  GetDocumentByContainerId: 'reader',
  NewFileIndex: 'writer',
};

/** `Guid.Empty`: as a request id, "no database request". */
export const EMPTY_GUID = '00000000-0000-0000-0000-000000000000';

/**
 * A value of a DataContract member typed `object` (QueryParameter.Value, the result of ReturnScalar), named by its
 * `i:type`. null is `i:nil="true"`.
 * - int, short: a safe integer in the type's range. long: a bigint.
 * - decimal: the xs:decimal text as written (`12.50` keeps its scale, as a .NET decimal does).
 * - float, double: a number (NaN and the infinities included).
 * - dateTime: the xs:dateTime text: no offset for a Kind Unspecified value, `Z` for Utc, `±hh:mm` for Local.
 * - base64Binary: the bytes. guid: the canonical lower-case hyphenated form.
 */
export type ClrValue =
  | { type: 'int'; value: number }
  | { type: 'short'; value: number }
  | { type: 'long'; value: bigint }
  | { type: 'decimal'; value: string }
  | { type: 'float'; value: number }
  | { type: 'double'; value: number }
  | { type: 'boolean'; value: boolean }
  | { type: 'string'; value: string }
  | { type: 'dateTime'; value: string }
  | { type: 'base64Binary'; value: Uint8Array }
  | { type: 'guid'; value: string };

export type ClrValueType = ClrValue['type'];

export interface QueryParameter {
  Name: string | null;
  Value: ClrValue | null;
}

export interface IndexField {
  Name: string | null;
  Value: string | null;
}

/** DateTime members are xs:dateTime text in UTC with `Z` (DateTimeKind.Utc, as the names say). */
export interface FileData {
  Content: Uint8Array | null;
  ContentType: string | null;
  CreatedUtc: string;
  FileId: string;
  FileName: string | null;
  Length: bigint;
  ModifiedUtc: string;
  Sha256: string | null;
}

export interface DocumentData {
  ContainerId: string;
  ContentType: string | null;
  CreatedUtc: string;
  DocumentId: string;
  Fields: IndexField[] | null;
  FileId: string;
  FileName: string | null;
  Length: bigint;
  Title: string | null;
}

export interface FileIndexData {
  ContainerId: string;
  DocumentId: string;
  Fields: IndexField[] | null;
  FileId: string;
  Title: string | null;
}

/** A DataTable result: what datatable-writer.ts writes (inline schema + diffgram), as the XML text of its two elements. */
export interface DataTableResult {
  readonly xml: string;
  /** The same XML as events, when they were kept: the bridge writes binary XML from them without reading the text. */
  readonly events?: XmlEventSource;
}

/** Arguments and results per operation, named as in the contract. */
export interface Operations {
  Heartbeat: { args: Record<string, never>; result: boolean };
  CreateDatabaseRequest: { args: { database: string | null }; result: string };
  CloseDatabaseRequest: { args: { requestId: string; commit: boolean }; result: boolean };
  ReturnDatatable: { args: SqlArgs; result: DataTableResult };
  ReturnScalar: { args: SqlArgs; result: ClrValue | null };
  ExecuteNonQuery: { args: SqlArgs; result: number };
  NewFile: { args: { file: FileData | null }; result: string };
  UpdateFile: { args: { file: FileData | null }; result: boolean };
  GetFile: { args: { fileId: string }; result: FileData | null };
  DeleteFile: { args: { fileId: string }; result: boolean };
  GetDocumentByDocumentId: { args: { documentId: string }; result: DocumentData | null };
  GetDocumentByContainerId: { args: { containerId: string }; result: DocumentData[] };
  NewFileIndex: { args: { index: FileIndexData | null }; result: string };
}

export interface SqlArgs {
  requestId: string;
  sql: string | null;
  parameters: QueryParameter[] | null;
}

/**
 * Who is calling, as the transport established it. `name` is normalized (`DOMAIN\user`, `user@REALM`) or `anonymous`
 * (security mode None only). `connectionId` names the connection the call came on: a database request is rolled back
 * when the connection that opened it breaks. `sids` are the Windows SIDs the domain vouched for at logon (the user's
 * own first, then the enabled groups, nested ones included: a Kerberos ticket's PAC, winbind for domain NTLM); empty
 * or absent for local accounts, tickets without a PAC and the anonymous identity. Roles may name them.
 */
export interface Caller {
  name: string;
  anonymous: boolean;
  connectionId: string;
  sids?: readonly string[];
}

/**
 * The fault names of the contract ("Faults") plus `InternalError` for a failure of the service itself (a store that
 * is unavailable, content that no longer matches its sha256), which the spec leaves unnamed.
 */
export type FaultName =
  | 'AccessDenied'
  | 'UnknownDatabaseRequest'
  | 'UnknownDatabase'
  | 'SqlError'
  | 'InvalidArgument'
  | 'FileNotFound'
  | 'QuotaExceeded'
  | 'Timeout'
  | 'NotSupported'
  | 'InternalError';

/** Whose fault it is: SOAP 1.2 `s:Sender` (the caller's) or `s:Receiver` (the service's). */
export const FAULT_CODE: Readonly<Record<FaultName, 'Sender' | 'Receiver'>> = {
  AccessDenied: 'Sender',
  UnknownDatabaseRequest: 'Sender',
  UnknownDatabase: 'Sender',
  SqlError: 'Sender',
  InvalidArgument: 'Sender',
  FileNotFound: 'Sender',
  QuotaExceeded: 'Sender',
  Timeout: 'Receiver',
  NotSupported: 'Sender',
  InternalError: 'Receiver',
};

/** A typed refusal; the SOAP layer writes it as a fault with `name` as the Subcode and `message` as the Reason. */
export class IdbFault extends Error {
  override name = 'IdbFault';
  constructor(
    readonly fault: FaultName,
    message: string,
  ) {
    super(message);
  }

  get code(): 'Sender' | 'Receiver' {
    return FAULT_CODE[this.fault];
  }
}
