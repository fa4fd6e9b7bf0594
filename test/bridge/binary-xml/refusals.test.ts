/** What the MC-NBFX reader refuses, with the BinaryXmlError code it names. */
import { describe, expect, it } from 'vitest';
import { type BinaryXmlError, decodeDocument } from '../../../tcp-bridge/src/binary-xml/index.ts';
import { unhex } from './documents.ts';

describe('MC-NBFX reader refusals', () => {
  const refuse = (h: string, code: BinaryXmlError['code']): void => {
    expect(() => decodeDocument(unhex(h))).toThrow(expect.objectContaining({ name: 'BinaryXmlError', code }));
  };

  it('refuses malformed documents with typed errors', () => {
    refuse('40 01 78', 'Truncated'); // element never closed
    refuse('01', 'InvalidRecord'); // end with nothing open
    refuse('81', 'InvalidRecord'); // text carrying an end at the top
    refuse('40 01 78 a5', 'InvalidRecord'); // StartListTextWithEndElement is no record
    refuse('40 01 78 a6 01', 'InvalidRecord'); // EndListText without a list
    refuse('40 01 78 a4 a4 a6 a6 01', 'InvalidRecord'); // nested list
    refuse('40 01 78 a4 83 a6 01', 'InvalidRecord'); // WithEndElement inside a list
    refuse('40 01 78 04 01 61 83 01', 'InvalidRecord'); // attribute value with an end
    refuse('40 01 78 04 01 61 40 01', 'InvalidRecord'); // attribute value not text
    refuse('78', 'InvalidRecord'); // past the element records
    refuse('04 01 61 82', 'InvalidRecord'); // attribute with no element
    refuse('be', 'InvalidRecord');
    refuse('40 01 78 98 05 61', 'Truncated');
    refuse('40 01 78 9c ffffffff', 'InvalidValue'); // negative Chars32 length
    refuse('40 01 78 9c ffffff7f', 'Truncated'); // 2 GiB announced, nothing there: no allocation
    refuse('40 01 78 b6 03 610062', 'InvalidValue'); // odd UTF-16 length
    refuse('40 01 78 98 02 c328 01', 'InvalidUtf8');
    refuse('40 01 78 98 01 c3 01', 'InvalidUtf8'); // one byte of text, not ASCII (the one-letter path)
    refuse('40 01 c3 01', 'InvalidUtf8'); // a one-byte element name, not ASCII
    refuse('40 01 78 b4 02 01', 'InvalidValue'); // Bool byte 2
    refuse(`40 01 78 94 ${'00'.repeat(2)}1d00 ${'00'.repeat(12)} 01`, 'InvalidValue'); // scale 29
    refuse('40 01 78 bc 1a 02 01', 'InvalidValue'); // QName prefix past z
    refuse('42 80 80 80 80 10', 'InvalidValue'); // MultiByteInt31 over 31 bits
    refuse('42 d0 07 01', 'UnknownDictionaryString'); // static string 488
    refuse('42 01 01', 'UnknownDictionaryString'); // session string without a session
    refuse('5e 01 78 01', 'UndeclaredPrefix');
    refuse('03 03 40 01 61 01 8d 01 00000000', 'InvalidRecord'); // array of array
    refuse('03 40 01 61 82 01 8d 01 00000000', 'InvalidRecord'); // array element with content
    refuse('03 40 01 61 01 81 01', 'InvalidRecord'); // not an array item type
    refuse('03 40 01 61 01 8d 00', 'InvalidValue'); // no items
    refuse('03 40 01 61 01 8d ffffff7f 00', 'Truncated'); // 2^31-1 items announced
  });

  it('bounds nesting and record counts', () => {
    const deep = (n: number): string => '40 01 78'.repeat(n) + ' 01'.repeat(n);
    expect(() => decodeDocument(unhex(deep(32)))).not.toThrow();
    refuse(deep(33), 'QuotaExceeded');
    expect(() => decodeDocument(unhex(deep(40)), { maxDepth: 40 })).not.toThrow();
    expect(() => decodeDocument(unhex(`40 01 78 ${'80'.repeat(100)} 01`), { maxRecords: 50 })).toThrow(
      expect.objectContaining({ code: 'QuotaExceeded' }),
    );
    // A hostile nesting of many thousand levels meets the quota, not the call stack.
    expect(() => decodeDocument(unhex('40 01 78'.repeat(100_000)), { maxDepth: 1_000_000 })).toThrow(
      expect.objectContaining({ code: 'Truncated' }),
    );
  });
});
