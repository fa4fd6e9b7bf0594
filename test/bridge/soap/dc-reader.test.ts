/**
 * The DataContract reader (tcp-bridge/src/soap/dc-reader.ts) through readRequest: `object` values of every i:type, as
 * records and as text, and nil where the type allows it and where it does not.
 */
import { describe, expect, it } from 'vitest';
import {
  attribute,
  boolText,
  bytesText,
  dateTimeText,
  decimalText,
  element,
  intText,
  qnameText,
  uuidText,
  xmlns,
  type XmlContent,
  type XmlElement,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { readRequest } from '../../../tcp-bridge/src/soap/index.ts';
import type { ClrValue, Operations } from '../../../src/idb/contract.ts';
import {
  contractRoot,
  member,
  nil,
  param,
  request,
  SER,
  text,
  typed,
  wire,
  XSD,
  XSI,
} from '../../support/nettcp/soap.ts';
import { expectInvalidArgument, GUID_A, GUID_B, OPTIONS, queryParameter, sqlParams, TICKS_2022 } from './helpers.ts';

/** ReturnScalar with one parameter whose Value is `value`; the arguments' one ClrValue read back. */
function clrValueOf(value: XmlElement, { onWire = true } = {}): ClrValue | null {
  const document = request('ReturnScalar', sqlParams([queryParameter('p', value)]));
  const args = readRequest(onWire ? wire(document) : document, OPTIONS).args as Operations['ReturnScalar']['args'];
  return args.parameters![0]!.Value;
}

describe('object values: every i:type, as records and as text', () => {
  const cases: [string, string, XmlContent[], ClrValue][] = [
    ['int record', 'int', [intText(-7)], { type: 'int', value: -7 }],
    ['int text', 'int', text(' 2147483647 '), { type: 'int', value: 2147483647 }],
    ['short', 'short', [intText(-32768)], { type: 'short', value: -32768 }],
    ['short as an Int8 record', 'short', [intText(-128)], { type: 'short', value: -128 }],
    ['int at its edge, an Int32 record', 'int', [intText(-2147483648)], { type: 'int', value: -2147483648 }],
    ['int as an Int64 record', 'int', [{ kind: 'text', type: 'Int64', value: 5n }], { type: 'int', value: 5 }],
    ['int 0 as a Zero record', 'int', [{ kind: 'text', type: 'Zero' }], { type: 'int', value: 0 }],
    ['short 1 as a One record', 'short', [{ kind: 'text', type: 'One' }], { type: 'short', value: 1 }],
    ['long record', 'long', [intText(-(2n ** 63n))], { type: 'long', value: -(2n ** 63n) }],
    ['long text', 'long', text('9007199254740993'), { type: 'long', value: 9007199254740993n }],
    ['string', 'string', text('héllo ✓'), { type: 'string', value: 'héllo ✓' }],
    ['empty string', 'string', [], { type: 'string', value: '' }],
    ['decimal record', 'decimal', [decimalText('12.50')], { type: 'decimal', value: '12.50' }],
    ['decimal text', 'decimal', text('+.5'), { type: 'decimal', value: '0.5' }],
    ['double record', 'double', [{ kind: 'text', type: 'Double', value: 0.1 }], { type: 'double', value: 0.1 }],
    ['double text', 'double', text('1.5E+300'), { type: 'double', value: 1.5e300 }],
    ['double INF', 'double', text('-INF'), { type: 'double', value: -Infinity }],
    ['double NaN', 'double', text('NaN'), { type: 'double', value: NaN }],
    [
      'float record',
      'float',
      [{ kind: 'text', type: 'Float', value: Math.fround(0.1) }],
      { type: 'float', value: Math.fround(0.1) },
    ],
    ['float text', 'float', text('0.1'), { type: 'float', value: Math.fround(0.1) }],
    ['float as an integer record', 'float', [intText(3)], { type: 'float', value: 3 }],
    ['boolean record', 'boolean', [boolText(false)], { type: 'boolean', value: false }],
    ['boolean text', 'boolean', text('1'), { type: 'boolean', value: true }],
    [
      'dateTime Utc record',
      'dateTime',
      [dateTimeText(TICKS_2022 + 1234567n, 1)],
      { type: 'dateTime', value: '2022-01-01T00:00:00.1234567Z' },
    ],
    [
      'dateTime Unspecified record',
      'dateTime',
      [dateTimeText(TICKS_2022, 0)],
      { type: 'dateTime', value: '2022-01-01T00:00:00' },
    ],
    [
      'dateTime text with offset',
      'dateTime',
      text('2022-06-01T12:00:00+02:00'),
      { type: 'dateTime', value: '2022-06-01T12:00:00+02:00' },
    ],
    [
      'base64Binary record',
      'base64Binary',
      [bytesText(Uint8Array.of(0, 255))],
      { type: 'base64Binary', value: Uint8Array.of(0, 255) },
    ],
    ['base64Binary text', 'base64Binary', text('AP8='), { type: 'base64Binary', value: Uint8Array.of(0, 255) }],
    ['empty base64Binary', 'base64Binary', [], { type: 'base64Binary', value: new Uint8Array(0) }],
  ];
  for (const [name, type, content, expected] of cases) {
    it(name, () => expect(clrValueOf(typed('Value', type, content))).toEqual(expected));
  }

  it('guid, in the Serialization namespace (text, and the Guid record)', () => {
    expect(clrValueOf(typed('Value', 'guid', text(GUID_A.toUpperCase()), SER))).toEqual({
      type: 'guid',
      value: GUID_A,
    });
    expect(clrValueOf(typed('Value', 'guid', [uuidText(GUID_A)], SER))).toEqual({ type: 'guid', value: GUID_A });
  });

  it('resolves the QName prefix through the declarations in scope, wherever they are', () => {
    const onValue = member('Value', [intText(5)], [attribute('i', 'type', 'x:int'), xmlns('x', XSD)]);
    expect(clrValueOf(onValue)).toEqual({ type: 'int', value: 5 });
    // Declared on the parameters element, and as a QNameDictionary record.
    const parameters = param(
      'parameters',
      [queryParameter('p', member('Value', [intText(5)], [attribute('i', 'type', qnameText('d', 'long'))]))],
      [...contractRoot(), xmlns('d', XSD)],
    );
    const document = request('ReturnScalar', [param('requestId', text(GUID_A)), param('sql', text('x')), parameters]);
    expect(
      (readRequest(wire(document), OPTIONS).args as Operations['ReturnScalar']['args']).parameters![0]!.Value,
    ).toEqual({ type: 'long', value: 5n });
    // The default namespace: an unprefixed QName.
    const unprefixed = member('Value', text('true'), [attribute('i', 'type', 'boolean'), xmlns('', XSD)]);
    expect(clrValueOf(unprefixed)).toEqual({ type: 'boolean', value: true });
    // A prefix redeclared closer in wins (x is ser on the parameters, XSD on the Value).
    const shadowedValue = member('Value', text('x'), [attribute('i', 'type', 'x:string'), xmlns('x', XSD)]);
    const shadowing = param('parameters', [queryParameter('p', shadowedValue)], [...contractRoot(), xmlns('x', SER)]);
    const shadowedDoc = request('ReturnScalar', [param('requestId', text(GUID_A)), param('sql', text('x')), shadowing]);
    expect(
      (readRequest(wire(shadowedDoc), OPTIONS).args as Operations['ReturnScalar']['args']).parameters![0]!.Value,
    ).toEqual({ type: 'string', value: 'x' });
    // Redeclaring the member's own prefix moves the member out of the contracts namespace: an unknown element, skipped.
    expect(clrValueOf(member('Value', text('x'), [attribute('i', 'type', 'b:string'), xmlns('b', XSD)]))).toBeNull();
  });

  it('refuses an i:type it does not know, in the wrong namespace, with an undeclared prefix, or missing', () => {
    const wrong: [XmlElement, RegExp][] = [
      [typed('Value', 'char', [intText(65)], SER), /char/],
      [typed('Value', 'anyURI', text('urn:x')), /anyURI/],
      [typed('Value', 'duration', text('PT1S'), SER), /duration/],
      [typed('Value', 'int', [intText(1)], SER), /Serialization.*int/],
      [typed('Value', 'guid', text(GUID_A), XSD), /XMLSchema\}guid/],
      [typed('Value', 'toString', text('x')), /toString/],
      [member('Value', [intText(1)], [attribute('i', 'type', 'q:int')]), /prefix 'q'/],
      [member('Value', [intText(1)]), /without i:type/],
      [member('Value', [intText(1)], [attribute('i', 'type', 'a:b:c'), xmlns('a', XSD)]), /qualified name/],
    ];
    for (const [value, reason] of wrong) {
      expectInvalidArgument(wire(request('ReturnScalar', sqlParams([queryParameter('p', value)]))), reason);
    }
  });

  it('refuses values outside their type', () => {
    const bad: XmlElement[] = [
      typed('Value', 'int', text('2147483648')),
      typed('Value', 'short', [intText(40000)]),
      typed('Value', 'short', [{ kind: 'text', type: 'Int32', value: -32769 }]),
      typed('Value', 'int', text('1.0')),
      typed('Value', 'decimal', text('1e5')),
      typed('Value', 'decimal', text('79228162514264337593543950336')),
      typed('Value', 'double', text('Infinity')),
      typed('Value', 'boolean', text('True')),
      typed('Value', 'dateTime', text('2022-01-01T24:00:00')),
      typed('Value', 'base64Binary', text('A===')),
      typed('Value', 'guid', text('0f8fad5b-d9cb-469f-a165-70867728950'), SER),
      typed('Value', 'int', [element('b', 'x')]),
    ];
    for (const value of bad)
      expectInvalidArgument(wire(request('ReturnScalar', sqlParams([queryParameter('p', value)]))));
  });
});

describe('nil', () => {
  it('is accepted wherever the type is a reference type', () => {
    const n = (name: string) => member(name, [], [nil()]);
    expect(
      readRequest(wire(request('CreateDatabaseRequest', [param('database', [], [nil(), xmlns('i', XSI)])])), OPTIONS)
        .args,
    ).toEqual({ database: null });
    const allNil = param('sql', [], [nil(), xmlns('i', XSI)]);
    expect(
      readRequest(
        wire(
          request('ExecuteNonQuery', [
            param('requestId', text(GUID_A)),
            allNil,
            param('parameters', [], [nil(), xmlns('i', XSI)]),
          ]),
        ),
        OPTIONS,
      ).args,
    ).toEqual({
      requestId: GUID_A,
      sql: null,
      parameters: null,
    });
    expect(
      readRequest(
        wire(request('ReturnScalar', sqlParams([member('QueryParameter', [n('Name'), n('Value')])]))),
        OPTIONS,
      ).args,
    ).toMatchObject({
      parameters: [{ Name: null, Value: null }],
    });
    expect(readRequest(wire(request('NewFile', [param('file', [], [nil(), xmlns('i', XSI)])])), OPTIONS).args).toEqual({
      file: null,
    });
    const file = param('file', [n('Content'), n('ContentType'), n('FileName'), n('Sha256')], contractRoot());
    expect(readRequest(wire(request('UpdateFile', [file])), OPTIONS).args).toMatchObject({
      file: { Content: null, ContentType: null, FileName: null, Sha256: null },
    });
    expect(
      readRequest(wire(request('NewFileIndex', [param('index', [], [nil(), xmlns('i', XSI)])])), OPTIONS).args,
    ).toEqual({ index: null });
    const index = param('index', [n('Fields'), n('Title'), member('FileId', text(GUID_B))], contractRoot());
    expect(readRequest(wire(request('NewFileIndex', [index])), OPTIONS).args).toMatchObject({
      index: { Fields: null, Title: null },
    });
    // i:nil="1" and i:nil="false" (a value present).
    const one = param('database', [], [attribute('i', 'nil', '1'), xmlns('i', XSI)]);
    expect(readRequest(wire(request('CreateDatabaseRequest', [one])), OPTIONS).args).toEqual({ database: null });
    const notNil = param('database', text('x'), [attribute('i', 'nil', 'false'), xmlns('i', XSI)]);
    expect(readRequest(wire(request('CreateDatabaseRequest', [notNil])), OPTIONS).args).toEqual({ database: 'x' });
  });

  it('is refused for value types, for array items, and when it is not a boolean', () => {
    const nilParam = (name: string) => param(name, [], [nil(), xmlns('i', XSI)]);
    expectInvalidArgument(
      wire(request('CloseDatabaseRequest', [nilParam('requestId'), param('commit', [boolText(true)])])),
      /requestId.*nil/,
    );
    expectInvalidArgument(
      wire(request('CloseDatabaseRequest', [param('requestId', text(GUID_A)), nilParam('commit')])),
      /commit.*nil/,
    );
    for (const name of ['FileId', 'Length', 'CreatedUtc']) {
      expectInvalidArgument(
        wire(request('NewFile', [param('file', [member(name, [], [nil()])], contractRoot())])),
        new RegExp(`${name}.*nil`),
      );
    }
    expectInvalidArgument(
      wire(request('ReturnScalar', sqlParams([member('QueryParameter', [], [nil()])]))),
      /item.*nil/,
    );
    expectInvalidArgument(
      wire(request('CreateDatabaseRequest', [param('database', [], [attribute('i', 'nil', 'yes'), xmlns('i', XSI)])])),
      /nil="yes"/,
    );
  });
});
