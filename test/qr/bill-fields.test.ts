/** readQrBill (src/qr/bill.ts) field by field: addresses, amount, currency, the optional lines 32-34. */
import { describe, expect, it } from 'vitest';
import { ADDRESS_KEYS, bill, payload, reason } from '../support/qr/qr-payload.ts';

describe('readQrBill: addresses', () => {
  it('reads K (combined) addresses: lines 7 and 8 are the address lines, no street, number, postcode or city', () => {
    const b = bill(
      payload({
        5: 'K',
        7: 'Rue du Lac 1268',
        8: '2501 Biel',
        9: '',
        10: '',
        21: 'K',
        23: 'Marktgasse 28',
        24: '9400 Rorschach',
        25: '',
        26: '',
      }),
    );
    expect(b.creditor).toEqual({
      addressType: 'K',
      name: 'Robert Schneider AG',
      street: null,
      buildingNumber: null,
      addressLine1: 'Rue du Lac 1268',
      addressLine2: '2501 Biel',
      postalCode: null,
      city: null,
      country: 'CH',
    });
    expect(b.ultimateDebtor).toMatchObject({
      addressType: 'K',
      addressLine1: 'Marktgasse 28',
      addressLine2: '9400 Rorschach',
      street: null,
      city: null,
    });
    expect(Object.keys(b.creditor)).toEqual(ADDRESS_KEYS);
  });

  it('does not validate address content (tolerant reader)', () => {
    const b = bill(payload({ 6: '', 9: '', 10: '', 11: 'Switzerland', 22: 'x'.repeat(200) }));
    expect(b.creditor).toMatchObject({ name: null, postalCode: null, city: null, country: 'Switzerland' });
    expect(b.ultimateDebtor!.name).toHaveLength(200);
  });

  it('reads an S address with empty street and number', () => {
    expect(bill(payload({ 7: '', 8: '' })).creditor).toMatchObject({
      addressType: 'S',
      street: null,
      buildingNumber: null,
      postalCode: '2501',
    });
  });

  it('infers the layout of an address whose type is neither S nor K', () => {
    expect(bill(payload({ 5: '' })).creditor).toMatchObject({
      addressType: 'S',
      street: 'Rue du Lac',
      postalCode: '2501',
      city: 'Biel',
    });
    expect(bill(payload({ 5: 'X', 7: 'Rue du Lac 1268', 8: '2501 Biel', 9: '', 10: '' })).creditor).toMatchObject({
      addressType: 'K',
      addressLine1: 'Rue du Lac 1268',
      addressLine2: '2501 Biel',
    });
  });
});

describe('readQrBill: amount', () => {
  // Up to 9 integer digits and 0 to 2 decimals: Codecrete's decoder accepts `50` and `50.5` too (see AMOUNT in bill.ts).
  it.each([
    ['1949.75', 1949.75],
    ['0.00', 0],
    ['0.01', 0.01],
    ['0.50', 0.5],
    ['1234.50', 1234.5],
    ['999999999.99', 999999999.99],
    ['50', 50],
    ['50.5', 50.5],
    ['7', 7],
    ['007.00', 7],
    ['', null],
    ['   ', null],
  ])('reads %j as %j', (text, amount) => {
    expect(bill(payload({ 19: text })).amount).toBe(amount);
  });

  it.each([
    '1239d49.75',
    '-1.00',
    '+1.00',
    '1,000.00',
    '1000,00',
    '1949.755',
    '1000000000.00',
    '9999999999',
    '.50',
    '50.',
    '1e3',
    'NaN',
    'Infinity',
    'CHF 10.00',
    '10 .00',
    '１２.００',
  ])('rejects %j as amount', (text) => {
    expect(reason(payload({ 19: text }))).toBe('amount');
  });
});

describe('readQrBill: currency', () => {
  it('accepts CHF and EUR', () => {
    expect(bill(payload({ 20: 'CHF' })).currency).toBe('CHF');
    expect(bill(payload({ 20: 'EUR' })).currency).toBe('EUR');
  });

  it.each(['USD', 'chf', 'Fr.', ''])('rejects %j as currency', (currency) => {
    expect(reason(payload({ 20: currency }))).toBe('currency');
  });
});

describe('readQrBill: optional lines 32-34', () => {
  it('reads a 34-line payload: bill information, then the alternative procedures joined by LF', () => {
    const b = bill(payload({}, ['//S1/10/10201409/11/190512', 'UV;UltraPay005;12345', 'XY;XYService;54321']));
    expect(b.billInformation).toBe('//S1/10/10201409/11/190512');
    expect(b.alternativeProcedureParameters).toBe('UV;UltraPay005;12345\nXY;XYService;54321');
  });

  it('reads 32 and 33 lines', () => {
    expect(bill(payload({}, ['//S1/10/1']))).toMatchObject({
      billInformation: '//S1/10/1',
      alternativeProcedureParameters: null,
    });
    expect(bill(payload({}, ['', 'eBill/B/a@example.com']))).toMatchObject({
      billInformation: null,
      alternativeProcedureParameters: 'eBill/B/a@example.com',
    });
  });

  it('drops an empty alternative procedure line', () => {
    expect(bill(payload({}, ['', '', 'XY;XYService;54321'])).alternativeProcedureParameters).toBe('XY;XYService;54321');
  });

  it('reads line 32 positionally, even when a generator put an alternative procedure there', () => {
    expect(bill(payload({}, ['eBill/B/donor@example.com']))).toMatchObject({
      billInformation: 'eBill/B/donor@example.com',
      alternativeProcedureParameters: null,
    });
  });

  it('never rejects for the content of the optional lines', () => {
    const b = bill(payload({}, ['not S1 at all', 'x'.repeat(500), '\u0000']));
    expect(b.billInformation).toBe('not S1 at all');
    expect(b.alternativeProcedureParameters).toBe(`${'x'.repeat(500)}\n\u0000`);
  });
});
