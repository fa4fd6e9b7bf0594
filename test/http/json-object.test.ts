import { describe, expect, it } from 'vitest';
import { JsonSyntaxError, JsonWithText, RawJsonString, parseJsonObject } from '../../src/http/json-object.ts';

const enc = new TextEncoder();
const parse = (json: string, raw: string[] = ['base64Pdf']) => parseJsonObject(enc.encode(json), { bytes: raw });
const text = (v: unknown) => new TextDecoder().decode((v as RawJsonString).bytes);

describe('parseJsonObject', () => {
  it('keeps the named string member as a view of the body, without copying', () => {
    const body = enc.encode('{"base64Pdf": "QUJD", "other": 1}');
    const members = parseJsonObject(body, { bytes: ['base64Pdf'] });
    const raw = members.base64Pdf as RawJsonString;
    expect(raw).toBeInstanceOf(RawJsonString);
    expect(raw.bytes.buffer).toBe(body.buffer);
    expect(text(raw)).toBe('QUJD');
    expect(members.other).toBe(1);
  });

  it('matches raw member names case-insensitively and parses everything else with JSON semantics', () => {
    const members = parse(
      '{ "BASE64PDF" : "QUJD" , "references": [1, "two", {"three": [3]}, null], "n": -1.5e3, "t": true, "s": "é\\u00e9" }',
    );
    expect(text(members.BASE64PDF)).toBe('QUJD');
    expect(members).toMatchObject({ references: [1, 'two', { three: [3] }, null], n: -1500, t: true, s: 'éé' });
  });

  it('resolves escapes in the raw member (wrapped Base64, escaped slashes)', () => {
    expect(text(parse('{"base64Pdf": "QU\\r\\nJD\\/+\\u0041"}').base64Pdf)).toBe('QU\r\nJD/+A');
    // non-ASCII can never be Base64: it becomes a byte no alphabet has
    expect(Array.from((parse('{"base64Pdf": "\\u00e9"}').base64Pdf as RawJsonString).bytes)).toEqual([0xff]);
  });

  it('finds the end of strings with escaped quotes and backslashes', () => {
    expect(parse('{"a": "x\\\\", "b": "y\\"z", "base64Pdf": "QUJD"}')).toMatchObject({ a: 'x\\', b: 'y"z' });
  });

  it('keeps the JSON text of members passed back untouched', () => {
    const members = parseJsonObject(enc.encode('{"References": [12345678901234567890, 1.50, {"a" : "é"}], "x": 1}'), {
      text: ['references'],
    });
    expect(members.References).toEqual(
      // biome-ignore lint/correctness/noPrecisionLoss: the number is past 2^53 on purpose; its text must survive
      new JsonWithText([12345678901234567890, 1.5, { a: 'é' }], '[12345678901234567890, 1.50, {"a" : "é"}]'),
    );
  });

  it('parses a non-string value of a raw member normally', () => {
    expect(parse('{"base64Pdf": null}').base64Pdf).toBeNull();
    expect(parse('{"base64Pdf": 12345}').base64Pdf).toBe(12345);
    expect(parse('{"base64Pdf": ["a"]}').base64Pdf).toEqual(['a']);
  });

  it('lets a later duplicate win, as JSON.parse does', () => {
    expect(text(parse('{"base64Pdf": "AAAA", "base64Pdf": "QUJD"}').base64Pdf)).toBe('QUJD');
  });

  it.each([
    ['empty', ''],
    ['an array', '[1]'],
    ['truncated', '{"base64Pdf": "QUJD'],
    ['trailing data', '{"a": 1} x'],
    ['a missing colon', '{"a" 1}'],
    ['a trailing comma', '{"a": 1,}'],
    ['an unquoted key', '{a: 1}'],
    ['a raw newline in another string', '{"a": "QU\nJD"}'],
    ['a bad escape', '{"base64Pdf": "\\x41"}'],
    ['a bad value', '{"a": tru}'],
    ['invalid UTF-8', '{"a": "\xff"}'],
  ])('refuses %s', (_, json) => {
    const bytes =
      json === '{"a": "\xff"}'
        ? Uint8Array.from([...enc.encode('{"a": "'), 0xff, ...enc.encode('"}')])
        : enc.encode(json);
    expect(() => parseJsonObject(bytes, { bytes: ['base64Pdf'] })).toThrow(JsonSyntaxError);
  });
});
