/**
 * The simple types of the contract (the members' primitives and the values an `object` carries), each with its
 * `i:type` name, how it is read from an element's text records (binary records or text), and the records
 * DataContractSerializer has XmlBinaryWriter write for it: integers in the smallest Int record, bool as True/False,
 * decimal as Decimal, float and double as Float/Double unless integral, DateTime as a DateTime record (ToBinary),
 * byte[] as Bytes, Guid as its text (XmlWriterDelegator.WriteGuid writes `Guid.ToString()` raw), string as Chars.
 */
import {
  boolText,
  bytesText,
  dateTimeText,
  decimalText,
  decimalToBytes,
  doubleText,
  formatDateTime,
  intText,
  stringText,
  type XmlText,
} from '../binary-xml/index.ts';
import { type ClrValue, type ClrValueType, concatBytes } from '#idb';
import { SER_NS, XSD_NS } from './names.ts';
import { invalid, recordsText, xsBoolean } from './tree.ts';
import {
  DATE_TIME_TICKS_END,
  parseBase64,
  parseDateTime,
  parseDecimal,
  parseDouble,
  parseGuid,
  parseInteger,
} from './xsd.ts';

type ValueOf<T extends ClrValueType> = Extract<ClrValue, { type: T }>['value'];

export interface SimpleType<T extends ClrValueType> {
  /** The namespace of its `i:type` QName (the local name is T). */
  namespace: string;
  /** Throws InvalidArgument when the text is not a value of the type. */
  read(records: readonly XmlText[]): ValueOf<T>;
  /** The element's content: no record for "" and an empty byte[] (as XmlBinaryWriter writes nothing for them). */
  write(value: ValueOf<T>): XmlText[];
}

function parsed<V>(type: string, records: readonly XmlText[], parse: (text: string) => V | undefined): V {
  const value = parse(recordsText(records));
  if (value === undefined) throw invalid(`'${shorten(recordsText(records))}' is not a valid ${type}.`);
  return value;
}

const shorten = (value: string): string => (value.length > 64 ? `${value.slice(0, 64)}…` : value);

function integer<T extends 'int' | 'short'>(type: T, bits: number): SimpleType<T> {
  const max = (1n << BigInt(bits - 1)) - 1n;
  const low = -(2 ** (bits - 1));
  const high = 2 ** (bits - 1) - 1;
  return {
    namespace: XSD_NS,
    read: (records) => {
      // One binary Int record in range (what XmlBinaryWriter writes for a value, Zero and One for 0 and 1): its
      // number, without making it text and parsing that as a BigInt. Anything else takes the text's way, and its
      // refusals.
      const only = records.length === 1 ? records[0]! : undefined;
      if (only?.type === 'Int8' || only?.type === 'Int16' || only?.type === 'Int32')
        if (only.value >= low && only.value <= high) return only.value as ValueOf<T>;
      if (only?.type === 'Zero') return 0 as ValueOf<T>;
      if (only?.type === 'One') return 1 as ValueOf<T>;
      return Number(parsed(type, records, (t) => parseInteger(t, -max - 1n, max))) as ValueOf<T>;
    },
    write: (value) => [intText(value as number)],
  };
}

/** XmlBinaryWriter.WriteFloatText: an integral value in the Int64 range as an integer record, else Float. */
function floatText(value: number): XmlText {
  if (Number.isInteger(value) && !Object.is(value, -0) && value >= -(2 ** 63) && value < 2 ** 63)
    return intText(BigInt(value));
  return { kind: 'text', type: 'Float', value };
}

function dateTimeRecord(value: string): XmlText {
  const parsedValue = parseDateTime(value);
  if (parsedValue === undefined || parsedValue.ticks < 0n || parsedValue.ticks >= DATE_TIME_TICKS_END)
    return stringText(value);
  return dateTimeText(parsedValue.ticks, parsedValue.dateKind);
}

function readDateTime(records: readonly XmlText[]): string {
  const only = records.length === 1 ? records[0]! : undefined;
  if (only?.type === 'DateTime') return formatDateTime(only.ticks, only.dateKind);
  return parsed('dateTime', records, (t) => (parseDateTime(t) === undefined ? undefined : t.trim()));
}

function readBytes(records: readonly XmlText[]): Uint8Array {
  const chunks: Uint8Array[] = [];
  for (const record of records) {
    if (record.type === 'Bytes8' || record.type === 'Bytes16' || record.type === 'Bytes32') chunks.push(record.value);
    else if (record.type !== 'Empty') return parsed('base64Binary', records, parseBase64);
  }
  return concatBytes(chunks);
}

export const SIMPLE_TYPES: { readonly [T in ClrValueType]: SimpleType<T> } = {
  int: integer('int', 32),
  short: integer('short', 16),
  long: {
    namespace: XSD_NS,
    read: (records) => parsed('long', records, (t) => parseInteger(t, -(1n << 63n), (1n << 63n) - 1n)),
    write: (value) => [intText(value)],
  },
  decimal: {
    namespace: XSD_NS,
    read: (records) => parsed('decimal', records, parseDecimal),
    write: (value) => [decimalToBytes(value) ? decimalText(value) : stringText(value)],
  },
  float: {
    namespace: XSD_NS,
    read: (records) => Math.fround(parsed('float', records, parseDouble)),
    write: (value) => [floatText(Math.fround(value))],
  },
  double: {
    namespace: XSD_NS,
    read: (records) => parsed('double', records, parseDouble),
    write: (value) => [doubleText(value)],
  },
  boolean: {
    namespace: XSD_NS,
    read: (records) => parsed('boolean', records, xsBoolean),
    write: (value) => [boolText(value)],
  },
  string: {
    namespace: XSD_NS,
    read: recordsText,
    write: (value) => (value === '' ? [] : [stringText(value)]),
  },
  dateTime: {
    namespace: XSD_NS,
    read: readDateTime,
    write: (value) => [dateTimeRecord(value)],
  },
  base64Binary: {
    namespace: XSD_NS,
    read: readBytes,
    write: (value) => (value.length === 0 ? [] : [bytesText(value)]),
  },
  guid: {
    namespace: SER_NS,
    read: (records) => parsed('Guid', records, parseGuid),
    write: (value) => [stringText(value.toLowerCase())],
  },
};

/** The ClrValue type an `i:type` QName names; undefined for any other type (a char, a byte, a TimeSpan, …). */
export function simpleTypeNamed(name: string, namespace: string): ClrValueType | undefined {
  if (!Object.hasOwn(SIMPLE_TYPES, name)) return undefined;
  const type = name as ClrValueType;
  return SIMPLE_TYPES[type].namespace === namespace ? type : undefined;
}
