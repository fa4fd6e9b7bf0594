/** src/qr/iban.ts: MOD 97-10, QR-IBANs, and the bills readQrBill refuses for their IBAN. */
import { describe, expect, it } from 'vitest';
import { checkSwissIban, hasValidMod97, isQrIban, mod97 } from '../../src/qr/iban.ts';
import { bill, NON, payload, reason, rejection } from '../support/qr/qr-payload.ts';

describe('IBAN', () => {
  it('computes ISO 7064 MOD 97-10', () => {
    expect(mod97('0')).toBe(0);
    expect(mod97('98')).toBe(1);
    expect(mod97('A')).toBe(10);
    expect(mod97('z')).toBe(35);
    expect(mod97('CH-1')).toBeNull();
    expect(mod97('Ü')).toBeNull();
  });

  it.each([
    'CH9300762011623852957',
    'CH5800791123000889012',
    'CH3709000000304442225',
    'LI21088100002324013AA',
    'LI0508800636123378777',
  ])('accepts %s as an ordinary IBAN', (iban) => {
    expect(hasValidMod97(iban)).toBe(true);
    expect(checkSwissIban(iban)).toEqual({ ok: true, qrIban: false });
  });

  it('recognises a QR-IBAN by its institution id 30000-31999', () => {
    expect(checkSwissIban('CH4431999123000889012')).toEqual({ ok: true, qrIban: true });
    expect(isQrIban('CH0030000000000000000')).toBe(true);
    expect(isQrIban('CH0031999000000000000')).toBe(true);
    expect(isQrIban('CH0029999000000000000')).toBe(false);
    expect(isQrIban('CH0032000000000000000')).toBe(false);
    expect(isQrIban('CH003A000000000000000')).toBe(false);
  });

  it('detects wrong check digits, wrong length and stray characters', () => {
    expect(checkSwissIban('CH9400762011623852957')).toEqual({ ok: false, problem: 'check-digits' });
    expect(checkSwissIban('CH9300762011623852958')).toEqual({ ok: false, problem: 'check-digits' });
    expect(checkSwissIban('CH930076201162385295')).toEqual({ ok: false, problem: 'length' });
    expect(checkSwissIban('CH93007620116238529570')).toEqual({ ok: false, problem: 'length' });
    expect(checkSwissIban('CH93-0762011623852957')).toEqual({ ok: false, problem: 'check-digits' });
    expect(checkSwissIban('DE89370400440532013000')).toEqual({ ok: false, problem: 'country' });
    expect(checkSwissIban('')).toEqual({ ok: false, problem: 'missing' });
  });

  it('accepts lower-case letters in an IBAN and reports it as written', () => {
    expect(bill(payload({ ...NON, 4: 'ch5800791123000889012' })).iban).toBe('ch5800791123000889012');
  });

  it('rejects bills with foreign or broken IBANs', () => {
    expect(rejection(payload({ ...NON, 4: 'DE89370400440532013000' }))).toEqual({
      reason: 'iban-country',
      detail: 'The account "DE89370400440532013000" is not a Swiss or Liechtenstein IBAN.',
    });
    expect(rejection(payload({ ...NON, 4: '' }))).toEqual({
      reason: 'iban-country',
      detail: 'The QR-bill has no IBAN.',
    });
    expect(rejection(payload({ ...NON, 4: 'CH9400762011623852957' }))).toEqual({
      reason: 'iban-checksum',
      detail: 'The IBAN "CH9400762011623852957" has wrong check digits.',
    });
    expect(reason(payload({ ...NON, 4: 'CH930076201162385295' }))).toBe('iban-checksum');
  });
});
