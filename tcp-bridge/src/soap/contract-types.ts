/**
 * The shapes DataContractSerializer gives IIDBService on the wire (spec/IIDBService.md; the same as src/idb/wsdl.ts
 * publishes): each operation's parameters in order and its result, each data contract's members in alphabetical
 * order, in the contracts namespace; `T[]` is `ArrayOfT` with items named T.
 */
import { EMPTY_GUID, type OperationName } from '../../../src/idb/contract.ts';

export type ClassName = 'QueryParameter' | 'IndexField' | 'FileData' | 'DocumentData' | 'FileIndexData';
export type ArrayName = `ArrayOf${ClassName}`;
/** Simple types by their xs name; `anyType` is an `object` (a ClrValue with `i:type`). */
export type SimpleName = 'boolean' | 'int' | 'long' | 'string' | 'guid' | 'dateTime' | 'base64Binary' | 'anyType';
export type DcType = SimpleName | ClassName | ArrayName | 'DataTable';

export type Members = readonly (readonly [name: string, type: DcType])[];

export const CLASSES: Readonly<Record<ClassName, Members>> = {
  QueryParameter: [['Name', 'string'], ['Value', 'anyType']],
  IndexField: [['Name', 'string'], ['Value', 'string']],
  FileData: [
    ['Content', 'base64Binary'],
    ['ContentType', 'string'],
    ['CreatedUtc', 'dateTime'],
    ['FileId', 'guid'],
    ['FileName', 'string'],
    ['Length', 'long'],
    ['ModifiedUtc', 'dateTime'],
    ['Sha256', 'string'],
  ],
  DocumentData: [
    ['ContainerId', 'guid'],
    ['ContentType', 'string'],
    ['CreatedUtc', 'dateTime'],
    ['DocumentId', 'guid'],
    ['Fields', 'ArrayOfIndexField'],
    ['FileId', 'guid'],
    ['FileName', 'string'],
    ['Length', 'long'],
    ['Title', 'string'],
  ],
  FileIndexData: [['ContainerId', 'guid'], ['DocumentId', 'guid'], ['Fields', 'ArrayOfIndexField'], ['FileId', 'guid'], ['Title', 'string']],
};

const SQL: Members = [['requestId', 'guid'], ['sql', 'string'], ['parameters', 'ArrayOfQueryParameter']];

export const SIGNATURES: Readonly<Record<OperationName, { params: Members; result: DcType }>> = {
  Heartbeat: { params: [], result: 'boolean' },
  CreateDatabaseRequest: { params: [['database', 'string']], result: 'guid' },
  CloseDatabaseRequest: { params: [['requestId', 'guid'], ['commit', 'boolean']], result: 'boolean' },
  ReturnDatatable: { params: SQL, result: 'DataTable' },
  ReturnScalar: { params: SQL, result: 'anyType' },
  ExecuteNonQuery: { params: SQL, result: 'int' },
  NewFile: { params: [['file', 'FileData']], result: 'guid' },
  UpdateFile: { params: [['file', 'FileData']], result: 'boolean' },
  GetFile: { params: [['fileId', 'guid']], result: 'FileData' },
  DeleteFile: { params: [['fileId', 'guid']], result: 'boolean' },
  GetDocumentByDocumentId: { params: [['documentId', 'guid']], result: 'DocumentData' },
  GetDocumentByContainerId: { params: [['containerId', 'guid']], result: 'ArrayOfDocumentData' },
  NewFileIndex: { params: [['index', 'FileIndexData']], result: 'guid' },
};

export const isClass = (type: DcType): type is ClassName => Object.hasOwn(CLASSES, type);
export const isArray = (type: DcType): type is ArrayName => type.startsWith('ArrayOf');
export const itemOf = (type: ArrayName): ClassName => type.slice('ArrayOf'.length) as ClassName;

/** What DataContractSerializer leaves in a member it did not read: value types their default, the rest null. */
export const DEFAULTS: Readonly<Partial<Record<DcType, unknown>>> = {
  boolean: false,
  int: 0,
  long: 0n,
  guid: EMPTY_GUID,
  dateTime: '0001-01-01T00:00:00',
};

/** Value types: `i:nil` is refused for them (DataContractSerializer cannot put null into one). */
export const isValueType = (type: DcType): boolean => Object.hasOwn(DEFAULTS, type);
