/**
 * IIDBService as DataContractSerializer shapes it (docs/contract/iidbservice.md): each operation's parameters in order
 * and its result, each data contract's members, the value types' defaults, and the actions. Written down once because
 * two readers must agree on it to the letter: the published WSDL (wsdl.ts), from which clients are generated, and the
 * tcp-bridge's SOAP layer, which reads and writes what those clients send. Declarative and platform-free; each reader
 * maps the type names to its own terms (an XSD type reference, a wire codec).
 */
import { EMPTY_GUID, type OperationName } from './contract.ts';

/** The data contracts' namespace (spec: "Data contract namespace"). */
export const CONTRACTS_NS = 'http://schemas.datacontract.org/2004/07/IDBService.Contracts';
/** Guid (and char, duration, …) as DataContractSerializer names them. */
export const SER_NS = 'http://schemas.microsoft.com/2003/10/Serialization/';

export type ClassName = 'QueryParameter' | 'IndexField' | 'FileData' | 'DocumentData' | 'FileIndexData';
/** `T[]` is the collection contract `ArrayOfT` in T's namespace, its items named T. */
export type ArrayName = `ArrayOf${ClassName}`;
/** Simple types by their xs name (guid is in the serialization namespace); `anyType` is an `object` (a ClrValue). */
export type SimpleName = 'boolean' | 'int' | 'long' | 'string' | 'guid' | 'dateTime' | 'base64Binary' | 'anyType';
/** ReturnDatatable's result, which neither side can describe as a data contract. */
export type DcType = SimpleName | ClassName | ArrayName | 'DataTable';

export type Members = readonly (readonly [name: string, type: DcType])[];

/**
 * Members in alphabetical (ordinal) order: the order DataContractSerializer writes and the WSDL declares when no
 * DataMember sets Order, so the list is used as it stands.
 */
export const CLASSES: Readonly<Record<ClassName, Members>> = {
  QueryParameter: [
    ['Name', 'string'],
    ['Value', 'anyType'],
  ],
  IndexField: [
    ['Name', 'string'],
    ['Value', 'string'],
  ],
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
  FileIndexData: [
    ['ContainerId', 'guid'],
    ['DocumentId', 'guid'],
    ['Fields', 'ArrayOfIndexField'],
    ['FileId', 'guid'],
    ['Title', 'string'],
  ],
};

const SQL: Members = [
  ['requestId', 'guid'],
  ['sql', 'string'],
  ['parameters', 'ArrayOfQueryParameter'],
];

/** Parameter names and types as in the C# contract; keyed by OperationName so none is missing. */
export const SIGNATURES: Readonly<Record<OperationName, { params: Members; result: DcType }>> = {
  Heartbeat: { params: [], result: 'boolean' },
  CreateDatabaseRequest: { params: [['database', 'string']], result: 'guid' },
  CloseDatabaseRequest: {
    params: [
      ['requestId', 'guid'],
      ['commit', 'boolean'],
    ],
    result: 'boolean',
  },
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

/**
 * Value types: DataContractSerializer cannot put null into one, so the wire refuses `i:nil` and the WSDL is not
 * nillable.
 */
export const isValueType = (type: DcType): boolean => Object.hasOwn(DEFAULTS, type);

/** The contract's name, which WCF puts into every action. */
export const CONTRACT_NAME = 'IIDBService';

/** `{ns}IIDBService/` when ns ends in '/', else `{ns}/IIDBService/`: what an operation name follows in its action. */
export function actionPrefix(serviceNamespace: string): string {
  return `${serviceNamespace}${serviceNamespace.endsWith('/') ? '' : '/'}${CONTRACT_NAME}/`;
}

/** The action of an operation (spec: "Names on the wire"), as WCF combines the namespace and the contract name. */
export const actionOf = (serviceNamespace: string, operation: OperationName): string =>
  actionPrefix(serviceNamespace) + operation;
export const replyActionOf = (serviceNamespace: string, operation: OperationName): string =>
  `${actionOf(serviceNamespace, operation)}Response`;
