/**
 * QR-bill payloads for readQrBill's tests: the IG's example bill line by line, edits of its lines, and the reader's
 * answer taken as a bill or as a rejection.
 */
import { readQrBill, type QrBill, type QrBillRejection } from '../../../src/qr/bill.ts';
import { IG_EXAMPLE_LINES } from './qr-bills.ts';

/**
 * The IG's example bill with a QR-IBAN and a QR reference (Codecrete's QR_CODE_TEXT_2 without its optional lines).
 * Line n of a payload is BASE[n - 1], numbered as the IG numbers them.
 */
export const BASE = IG_EXAMPLE_LINES;

/** An ordinary IBAN with no reference, and one with a creditor reference (both for line changes to `payload`). */
export const NON = { 4: 'CH5800791123000889012', 28: 'NON', 29: '' };
export const SCOR = { 4: 'CH5800791123000889012', 28: 'SCOR', 29: 'RF18539007547034' };
/** The plain bill the HTTP and runtime tests send: 10.00, no debtor, no message. */
export const PLAIN = { 19: '10.00', 21: '', 22: '', 23: '', 24: '', 25: '', 26: '', 27: '', 30: '' };
/** The creditor as a combined (K) address, which IG 2.3 warns about. */
export const K_CREDITOR = { 5: 'K', 7: 'Rue du Lac 1268', 8: '2501 Biel', 9: '', 10: '' };

/** BASE with lines replaced (keys are 1-based line numbers), optional lines 32-34 appended, joined by `separator`. */
export function payload(changes: Record<number, string> = {}, optional: string[] = [], separator = '\n'): string {
  const lines = BASE.map((l, i) => changes[i + 1] ?? l);
  return [...lines, ...optional].join(separator);
}
export function bill(text: string): QrBill {
  const reading = readQrBill(text);
  if (!reading.ok) throw new Error(`expected a bill, got ${reading.reason}: ${reading.detail}`);
  return reading.bill;
}
export function rejection(text: string): { reason: QrBillRejection; detail: string } {
  const reading = readQrBill(text);
  if (reading.ok) throw new Error('expected a rejection, got a bill');
  return { reason: reading.reason, detail: reading.detail };
}
export const reason = (text: string): QrBillRejection => rejection(text).reason;
export const REASONS: readonly QrBillRejection[] = [
  'not-spc',
  'bad-header',
  'line-count',
  'no-trailer',
  'currency',
  'amount',
  'iban-country',
  'iban-checksum',
  'qrr-check-digit',
  'scor-checksum',
  'reference-kind',
];

/** The keys of a bill and of an address, in the order the HTTP response serializes them. */
export const BILL_KEYS = [
  'qrType',
  'version',
  'codingType',
  'iban',
  'creditor',
  'ultimateCreditor',
  'amount',
  'currency',
  'ultimateDebtor',
  'referenceType',
  'reference',
  'unstructuredMessage',
  'billInformation',
  'alternativeProcedureParameters',
];
export const ADDRESS_KEYS = [
  'addressType',
  'name',
  'street',
  'buildingNumber',
  'addressLine1',
  'addressLine2',
  'postalCode',
  'city',
  'country',
];
