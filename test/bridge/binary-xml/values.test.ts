/** Text values (values.ts): the text record XmlBinaryWriter chooses for a value, and the XML text .NET writes for it. */
import { describe, expect, it } from 'vitest';
import {
  formatDateTime,
  formatFloat,
  formatTimeSpan,
  intText,
  doubleText,
  stringText,
  textToString,
  bytesText,
} from '../../../tcp-bridge/src/binary-xml/index.ts';
import { text } from './documents.ts';

describe('text values', () => {
  it('builds text records as XmlBinaryWriter chooses them', () => {
    expect(stringText('')).toEqual({ kind: 'text', type: 'Empty' });
    expect(stringText('0').type).toBe('Zero');
    expect(stringText('alive')).toEqual({ kind: 'text', type: 'Chars8', value: 'alive' });
    expect(stringText('x'.repeat(256)).type).toBe('Chars16');
    expect(stringText('日本語').type).toBe('UnicodeChars8');
    expect([0, 1, 42, -129, 40000, 2 ** 40].map((n) => intText(n).type)).toEqual([
      'Zero',
      'One',
      'Int8',
      'Int16',
      'Int32',
      'Int64',
    ]);
    expect(intText(2n ** 64n - 1n).type).toBe('UInt64');
    expect([1.0, 1.5, 0.1, Number.NaN, Infinity].map((n) => doubleText(n).type)).toEqual([
      'One',
      'Float',
      'Double',
      'Double',
      'Float',
    ]);
    expect(bytesText(new Uint8Array(0)).type).toBe('Empty');
    expect(bytesText(new Uint8Array(300)).type).toBe('Bytes16');
  });

  it('converts to the XML text .NET would write', () => {
    expect(formatDateTime(0x08d9ccb9a7734000n, 0)).toBe('2022-01-01T00:00:00'); // NewFile's Created in the capture
    expect(formatDateTime(0x08d9ccb9a7734000n + 1234567n, 1)).toBe('2022-01-01T00:00:00.1234567Z');
    expect(formatDateTime(0n, 0)).toBe('0001-01-01T00:00:00');
    expect(formatDateTime(3155378975999999999n, 0)).toBe('9999-12-31T23:59:59.9999999');
    expect(formatTimeSpan(0n)).toBe('PT0S');
    expect(formatTimeSpan(36_000_000_000n)).toBe('PT1H');
    expect(formatTimeSpan(-(864_000_000_000n + 5_000_000n))).toBe('-P1DT0.5S');
    expect(formatTimeSpan(864_000_000_000n * 2n)).toBe('P2D');
    expect(formatFloat(1e15, false)).toBe('1E+15');
    expect(formatFloat(123456789012345, false)).toBe('123456789012345');
    expect(formatFloat(0.0001, false)).toBe('0.0001');
    expect(formatFloat(0.00001, false)).toBe('1E-05');
    expect(formatFloat(Math.fround(0.1), true)).toBe('0.1');
    expect(formatFloat(-Infinity, true)).toBe('-INF');
    expect(textToString(text('Decimal', { value: '-0.00' }))).toBe('0.00');
    expect(textToString(text('Bytes8', { value: Uint8Array.of(1, 2, 3) }))).toBe('AQID');
    expect(textToString(text('QNameDictionary', { prefix: 'b', localName: 'int', key: 7 }))).toBe('b:int');
  });
});
