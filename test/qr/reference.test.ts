/**
 * src/qr/reference.ts: QR references (mod 10 recursive), creditor references (ISO 11649), and the kind of reference
 * readQrBill accepts for the account.
 */
import { describe, expect, it } from 'vitest';
import { readQrBill } from '../../src/qr/bill.ts';
import { mod97 } from '../../src/qr/iban.ts';
import { isValidCreditorReference, mod10RecursiveCheckDigit, qrReferenceProblem } from '../../src/qr/reference.ts';
import { payload, reason, rejection, SCOR } from '../support/qr/qr-payload.ts';

describe('QR reference (mod 10 recursive)', () => {
  it('computes check digits', () => {
    expect(mod10RecursiveCheckDigit('21000000000313947143000901')).toBe(7);
    expect(mod10RecursiveCheckDigit('00000000000000000000000123')).toBe(6);
    expect(mod10RecursiveCheckDigit('')).toBe(0);
  });

  it.each(['210000000003139471430009017', '000000000000000000000001236', '000000000000000000000000000'])(
    'accepts %s',
    (ref) => {
      expect(qrReferenceProblem(ref)).toBeNull();
    },
  );

  it('rejects a wrong check digit, a wrong length and non-digits', () => {
    expect(qrReferenceProblem('210000000003139471430009018')).toBe('check-digit');
    expect(qrReferenceProblem('210000000003139471430009071')).toBe('check-digit');
    expect(qrReferenceProblem('21000000000313947143000901')).toBe('format');
    expect(qrReferenceProblem('2100000000031394714300090170')).toBe('format');
    expect(qrReferenceProblem('21000000000313947143000901A')).toBe('format');
    expect(qrReferenceProblem('')).toBe('format');
  });

  it('rejects bills whose QR reference is broken', () => {
    expect(rejection(payload({ 29: '210000000003139471430009018' }))).toEqual({
      reason: 'qrr-check-digit',
      detail: 'The QR reference "210000000003139471430009018" has a wrong check digit.',
    });
    expect(reason(payload({ 29: '1236' }))).toBe('qrr-check-digit');
    expect(reason(payload({ 29: '' }))).toBe('qrr-check-digit');
  });
});

describe('creditor reference (ISO 11649)', () => {
  it.each(['RF18539007547034', 'RF54000000000000001234', 'RF712348231', 'RF18000000000539007547034'])(
    'accepts %s',
    (ref) => {
      expect(isValidCreditorReference(ref)).toBe(true);
    },
  );

  it.each([
    ['an altered digit', 'RF18539007547035'],
    ['swapped check digits', 'RF81539007547034'],
    ['no body', 'RF18'],
    ['a body over 21 characters', 'RF180000000000539007547034'],
    ['lower-case rf', 'rf18539007547034'],
    ['another prefix', 'RX18539007547034'],
    ['a hyphen', 'RF18-539007547034'],
    ['nothing', ''],
  ])('rejects %s', (_name, ref) => {
    expect(isValidCreditorReference(ref)).toBe(false);
  });

  it('accepts lower-case letters in the body, as Codecrete does', () => {
    // ISO 11649 check digits: 98 minus the remainder of the body followed by RF00.
    const body = 'ABC123';
    const check = 98 - mod97(`${body}RF00`)!;
    const ref = `RF${String(check).padStart(2, '0')}${body}`;
    expect(isValidCreditorReference(ref)).toBe(true);
    expect(isValidCreditorReference(ref.replace(body, body.toLowerCase()))).toBe(true);
  });

  it('rejects bills whose creditor reference is broken', () => {
    expect(rejection(payload({ ...SCOR, 29: 'RF18539007547035' }))).toEqual({
      reason: 'scor-checksum',
      detail: 'The creditor reference "RF18539007547035" is not a valid RF reference.',
    });
    expect(reason(payload({ ...SCOR, 29: '' }))).toBe('scor-checksum');
  });
});

describe('readQrBill: reference kind against the account', () => {
  const QR_IBAN = 'CH4431999123000889012';
  const IBAN = 'CH5800791123000889012';

  it.each([
    ['QRR with a QR-IBAN', { 4: QR_IBAN, 28: 'QRR', 29: '210000000003139471430009017' }],
    ['SCOR with an IBAN', { 4: IBAN, 28: 'SCOR', 29: 'RF18539007547034' }],
    ['NON with an IBAN', { 4: IBAN, 28: 'NON', 29: '' }],
    ['NON with an LI IBAN', { 4: 'LI21088100002324013AA', 28: 'NON', 29: '' }],
  ])('accepts %s', (_name, changes) => {
    expect(readQrBill(payload(changes)).ok).toBe(true);
  });

  it.each([
    ['QRR with an ordinary IBAN', { 4: IBAN, 28: 'QRR', 29: '210000000003139471430009017' }],
    ['QRR with an ordinary IBAN and a bad check digit', { 4: IBAN, 28: 'QRR', 29: '210000000003139471430009018' }],
    ['SCOR with a QR-IBAN', { 4: QR_IBAN, 28: 'SCOR', 29: 'RF18539007547034' }],
    ['NON with a QR-IBAN', { 4: QR_IBAN, 28: 'NON', 29: '' }],
    ['NON with a reference', { 4: IBAN, 28: 'NON', 29: 'RF18539007547034' }],
    ['an unknown type', { 4: IBAN, 28: 'XXXX', 29: '' }],
    ['a lower-case type', { 4: IBAN, 28: 'non', 29: '' }],
    ['no type', { 4: IBAN, 28: '', 29: '' }],
  ])('rejects %s as reference-kind', (_name, changes) => {
    expect(reason(payload(changes))).toBe('reference-kind');
  });
});
