import { describe, expect, it } from 'vitest';
import { decodeBase64Strict as decodeBytes } from '../../src/base64.ts';

const bytes = (s: string) => Array.from(new TextEncoder().encode(s));
const decodeBase64Strict = (text: string) => decodeBytes(new TextEncoder().encode(text));

describe('decodeBase64Strict', () => {
  it.each([
    ['TWFu', 'Man'],
    ['TWE=', 'Ma'],
    ['TQ==', 'M'],
    ['SGVsbG8sIFdvcmxkIQ==', 'Hello, World!'],
  ])('decodes %s', (input, expected) => {
    expect(Array.from(decodeBase64Strict(input)!)).toEqual(bytes(expected));
  });

  it('ignores ASCII whitespace anywhere (RFC 2045 and PEM wrapping)', () => {
    expect(Array.from(decodeBase64Strict(' SGVs\r\nbG8s\tIFdv\ncmxk\fIQ==\n ')!)).toEqual(bytes('Hello, World!'));
  });

  it('decodes over its input: the answer is a view of the start of the same buffer', () => {
    const input = new TextEncoder().encode('  data:application/pdf;base64,SGVs\r\nbG8s IFdvcmxkIQ==');
    const out = decodeBytes(input)!;
    expect(out.buffer).toBe(input.buffer);
    expect(out.byteOffset).toBe(0);
    expect(new TextDecoder().decode(out)).toBe('Hello, World!');
  });

  it('decodes every length and byte value', () => {
    for (let n = 0; n < 40; n++) {
      const data = Uint8Array.from({ length: n + 1 }, (_, i) => (i * 97 + n * 31) & 0xff);
      const text = btoa(String.fromCharCode(...data));
      expect(Array.from(decodeBase64Strict(text)!)).toEqual(Array.from(data));
    }
  });

  it('strips a data URL prefix', () => {
    expect(Array.from(decodeBase64Strict('data:application/pdf;base64,TWFu')!)).toEqual(bytes('Man'));
    expect(Array.from(decodeBase64Strict('  data:application/pdf;base64,TWFu')!)).toEqual(bytes('Man'));
  });

  it.each([
    ['empty', ''],
    ['whitespace only', ' \n\t'],
    ['missing padding', 'TWE'],
    ['length 1 mod 4', 'TWFuT'],
    ['base64url alphabet', 'TW-_'],
    ['invalid character inside', 'TW!u'],
    ['junk after padding', 'TQ==TWFu'],
    ['padding in the middle', 'TQ=u'],
    ['three padding characters', 'T==='],
    ['non-ASCII', 'TWFué'],
    ['another data URL type', 'data:text/plain;base64,TWFu'],
  ])('refuses %s', (_, input) => {
    expect(decodeBase64Strict(input)).toBeUndefined();
  });
});
