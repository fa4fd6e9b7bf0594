/** readQrBill (src/qr/bill.ts): a complete bill, separators and line count, header and trailer, strings, results. */
import { describe, expect, it } from 'vitest';
import { readQrBill } from '../../src/qr/bill.ts';
import {
  ADDRESS_KEYS,
  BASE,
  BILL_KEYS,
  bill,
  NON,
  payload,
  REASONS,
  reason,
  rejection,
  SCOR,
} from '../support/qr/qr-payload.ts';

describe('readQrBill: a complete bill', () => {
  it('reads every field, in the order the HTTP response serializes them', () => {
    const b = bill(payload());
    expect(b).toEqual({
      qrType: 'SPC',
      version: '0200',
      codingType: '1',
      iban: 'CH4431999123000889012',
      creditor: {
        addressType: 'S',
        name: 'Robert Schneider AG',
        street: 'Rue du Lac',
        buildingNumber: '1268',
        addressLine1: null,
        addressLine2: null,
        postalCode: '2501',
        city: 'Biel',
        country: 'CH',
      },
      ultimateCreditor: null,
      amount: 1949.75,
      currency: 'CHF',
      ultimateDebtor: {
        addressType: 'S',
        name: 'Pia-Maria Rutschmann-Schnyder',
        street: 'Grosse Marktgasse',
        buildingNumber: '28',
        addressLine1: null,
        addressLine2: null,
        postalCode: '9400',
        city: 'Rorschach',
        country: 'CH',
      },
      referenceType: 'QRR',
      reference: '210000000003139471430009017',
      unstructuredMessage: 'Order dated 18.06.2020',
      billInformation: null,
      alternativeProcedureParameters: null,
    });
    expect(Object.keys(b)).toEqual(BILL_KEYS);
    expect(Object.keys(b.creditor)).toEqual(ADDRESS_KEYS);
    expect(Object.keys(b.ultimateDebtor!)).toEqual(ADDRESS_KEYS);
  });

  it('reads an ultimate creditor when any of its seven lines is filled, and keeps the key order', () => {
    const b = bill(
      payload({ 12: 'S', 13: 'Treuhand AG', 14: 'Bahnhofstrasse', 15: '1', 16: '8001', 17: 'Zürich', 18: 'CH' }),
    );
    expect(b.ultimateCreditor).toEqual({
      addressType: 'S',
      name: 'Treuhand AG',
      street: 'Bahnhofstrasse',
      buildingNumber: '1',
      addressLine1: null,
      addressLine2: null,
      postalCode: '8001',
      city: 'Zürich',
      country: 'CH',
    });
    expect(Object.keys(b.ultimateCreditor!)).toEqual(ADDRESS_KEYS);
    expect(bill(payload({ 13: 'Only a name' })).ultimateCreditor).not.toBeNull();
  });

  it('has no ultimate debtor when lines 21-27 are empty (or only spaces)', () => {
    const empty = { 21: '', 22: '', 23: '', 24: '', 25: '', 26: '', 27: '' };
    expect(bill(payload(empty)).ultimateDebtor).toBeNull();
    expect(bill(payload({ ...empty, 23: '   ' })).ultimateDebtor).toBeNull();
  });
});

describe('readQrBill: separators and line count', () => {
  const expected = bill(payload());

  it.each([
    ['LF', '\n'],
    ['CRLF', '\r\n'],
    ['CR', '\r'],
  ])('reads %s separators', (_name, separator) => {
    expect(bill(payload({}, [], separator))).toEqual(expected);
  });

  it('reads mixed separators', () => {
    // A CR is always followed by a CRLF here: a CR followed by an LF would be one CRLF around an empty line that vanished.
    const text = BASE.map((l, i) => l + ['\r\n', '\n', '\r'][i % 3])
      .join('')
      .replace(/\s+$/, '');
    expect(bill(text)).toEqual(expected);
  });

  it.each([
    ['one LF', '\n'],
    ['three LFs', '\n\n\n'],
    ['CRLFs', '\r\n\r\n'],
    ['lines of spaces', '\n  \n \t\n'],
  ])('removes trailing empty lines (%s) before counting', (_name, tail) => {
    expect(bill(payload() + tail)).toEqual(expected);
    // Also after a full 34-line payload: 37 raw lines, 34 once the empty tail is gone.
    expect(
      bill(payload({}, ['//S1/10/1', 'eBill/B/a@example.com', 'XY;XYService;54321']) + tail)
        .alternativeProcedureParameters,
    ).toBe('eBill/B/a@example.com\nXY;XYService;54321');
  });

  it('rejects fewer than 31 element lines', () => {
    const thirty = BASE.slice(0, 30).join('\n');
    expect(rejection(thirty)).toEqual({
      reason: 'line-count',
      detail: 'The QR-bill data has 30 lines; a QR-bill has 31 to 34.',
    });
    expect(reason('SPC\n0200\n1')).toBe('line-count');
    expect(reason('SPC\n0200')).toBe('line-count');
    expect(reason('SPC')).toBe('line-count');
    // Empty lines at the end do not count, so a bill cut after its reference is short even when padded.
    expect(reason(`${BASE.slice(0, 29).join('\n')}\n\n\n\n`)).toBe('line-count');
  });

  it('rejects more than 34 element lines', () => {
    expect(reason(payload({}, ['//S1/10/1', 'AV1', 'AV2', 'AV3']))).toBe('line-count');
    // An empty line inside the tail is an element line: 35 lines.
    expect(reason(payload({}, ['', '', '', 'AV3']))).toBe('line-count');
  });
});

describe('readQrBill: header and trailer', () => {
  it.each([
    ['an empty text', ''],
    ['garbage', 'garbage'],
    ['a URL', 'https://example.com/invoice/4711'],
    [
      'an EPC (GiroCode) payment',
      'BCD\n002\n1\nSCT\nBFSWDE33BER\nWikimedia Foerdergesellschaft\nDE33100205000001194700\nEUR123.45\n\n\nSpende fuer Wikipedia\n',
    ],
    ['lower-case spc', payload({ 1: 'spc' })],
    ['SPC followed by more', payload({ 1: 'SPCX' })],
  ])('rejects %s as not-spc', (_name, text) => {
    expect(reason(text)).toBe('not-spc');
  });

  it('checks SPC before anything else, so even a short code of another kind is not-spc', () => {
    expect(rejection('BCD\n002')).toEqual({
      reason: 'not-spc',
      detail: 'The QR code is not a Swiss QR-bill (its data does not start with SPC).',
    });
  });

  it('accepts any 02xx version and keeps it as written', () => {
    for (const version of ['0200', '0201', '0210', '0299']) expect(bill(payload({ 2: version })).version).toBe(version);
  });

  it.each(['0100', '0101', '0300', '020', '02000', '020f', '02a0', '', 'v200'])(
    'rejects version %j as bad-header',
    (version) => {
      expect(reason(payload({ 2: version }))).toBe('bad-header');
    },
  );

  it.each(['0', '2', '01', ''])('rejects coding type %j as bad-header', (codingType) => {
    expect(reason(payload({ 3: codingType }))).toBe('bad-header');
  });

  it('names an unsupported version before counting lines', () => {
    expect(rejection('SPC\r\n0101\r\n\r\n\r\n')).toEqual({
      reason: 'bad-header',
      detail: 'The QR-bill version "0101" is not supported (only 02xx versions are).',
    });
  });

  it.each(['E_P', 'epd', 'END', ''])('rejects trailer %j as no-trailer', (trailer) => {
    // With an empty line 31 a line 32 is needed, or the empty line would be trimmed away as trailing.
    expect(reason(payload({ 31: trailer }, trailer === '' ? ['//S1/10/1'] : []))).toBe('no-trailer');
  });
});

describe('readQrBill: strings', () => {
  it('trims surrounding spaces of every line, including the header and trailer', () => {
    const padded = payload(Object.fromEntries(BASE.map((l, i) => [i + 1, l === '' ? l : `  ${l} `])));
    expect(bill(padded)).toEqual(bill(payload()));
  });

  it('ignores a byte-order mark before SPC', () => {
    expect(bill(`\uFEFF${payload()}`).qrType).toBe('SPC');
  });

  it('removes spaces inside the IBAN and the reference', () => {
    const b = bill(payload({ 4: 'CH44 3199 9123 0008 8901 2', 29: '21 00000 00003 13947 14300 09017' }));
    expect(b.iban).toBe('CH4431999123000889012');
    expect(b.reference).toBe('210000000003139471430009017');
    expect(bill(payload({ ...SCOR, 29: 'RF18 5390 0754 7034' })).reference).toBe('RF18539007547034');
  });

  it('keeps inner spaces of other fields and makes empty optional lines null', () => {
    const b = bill(payload({ ...NON, 30: '', 6: 'Robert  Schneider   AG' }));
    expect(b.creditor.name).toBe('Robert  Schneider   AG');
    expect(b.reference).toBeNull();
    expect(b.unstructuredMessage).toBeNull();
    expect(b.billInformation).toBeNull();
    expect(b.alternativeProcedureParameters).toBeNull();
  });

  it('passes the v2.3 extended character set through unchanged', () => {
    const b = bill(
      payload({
        ...SCOR,
        22: 'Łukasz Żółć-Ștefănescu',
        23: 'Ulica Świętokrzyska',
        24: '5a',
        25: '00-360',
        26: 'Warszawa',
        27: 'PL',
        30: 'Fatura ağustos – 12 € ½ Ǆ',
      }),
    );
    expect(b.ultimateDebtor).toMatchObject({
      name: 'Łukasz Żółć-Ștefănescu',
      street: 'Ulica Świętokrzyska',
      city: 'Warszawa',
      country: 'PL',
    });
    expect(b.unstructuredMessage).toBe('Fatura ağustos – 12 € ½ Ǆ');
  });
});

describe('readQrBill: results', () => {
  it('has a rejection detail of one short sentence that does not echo the payload', () => {
    const long = 'A'.repeat(300);
    const cases = [
      payload({ 19: long }),
      payload({ 20: long }),
      payload({ 4: long }),
      payload({ 4: `CH${long}` }),
      payload({ 29: long }),
      payload({ ...SCOR, 29: `RF${long}` }),
      payload({ 28: long }),
      payload({ 2: long }),
      payload({ 3: long }),
      payload({ 31: long }),
      long,
    ];
    for (const text of cases) {
      const { detail } = rejection(text);
      expect(detail.length).toBeLessThan(160);
      expect(detail).toMatch(/^[A-Z].*\.$/);
      expect(detail).not.toContain('A'.repeat(60));
    }
  });

  it('never throws, whatever the text', () => {
    // Deterministic mutations of a valid payload: drop, duplicate or alter lines and characters.
    let seed = 42;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pieces = ['', ' ', '\n', '\r', '\r\n', 'SPC', 'EPD', '0', '9', 'RF', '.', '€', '\uD800', 'Ł'];
    for (let i = 0; i < 2000; i++) {
      const chars = Array.from(payload({}, i % 2 ? ['//S1/10/1', 'AV'] : []));
      for (let k = 1 + random(6); k > 0; k--)
        chars.splice(random(chars.length), random(3), pieces[random(pieces.length)]!);
      const reading = readQrBill(chars.join(''));
      if (!reading.ok) expect(REASONS).toContain(reading.reason);
    }
  });
});
