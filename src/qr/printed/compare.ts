import type { QrBill, QrBillAddress } from '../bill.ts';
import type { PrintedSections } from './headings.ts';

/** A printed field of the receipt or payment part, named as the warning's `fields` name it. */
export type PrintedField = 'account' | 'creditor' | 'reference' | 'currency' | 'amount' | 'debtor';

/** One field printed otherwise than the code says, with both as shown to a clerk. */
export interface Difference {
  field: PrintedField;
  printed: string;
  code: string;
}

/**
 * Compares what one part (receipt or payment part) prints with the code, field by field, as a clerk would: the account
 * and reference without their spaces, names and localities without regard to case and spacing, the amount as a number
 * (a space or an apostrophe between thousands). A field the part does not print is not compared, except that a
 * reference or an amount printed without one in the code (or the other way round) is a difference.
 */
export function differences(printed: PrintedSections, bill: QrBill, { receipt }: { receipt: boolean }): Difference[] {
  const found: Difference[] = [];
  const differ = (field: PrintedField, shown: string, code: string) => found.push({ field, printed: shown, code });
  if (printed.account) {
    const [account = '', ...creditor] = printed.account;
    if (compact(account) !== compact(bill.iban)) differ('account', account, spaced(bill.iban));
    const mismatch = addressMismatch(creditor, bill.creditor, !receipt);
    if (mismatch) differ('creditor', mismatch.printed, mismatch.code);
  }
  const reference = printed.reference?.join(' ') ?? '';
  if (printed.account && compact(reference) !== compact(bill.reference ?? ''))
    differ('reference', reference || '(none)', bill.reference ? spaced(bill.reference) : '(none)');
  if (printed.currency !== undefined && printed.currency !== '' && printed.currency !== bill.currency)
    differ('currency', printed.currency, bill.currency);
  if (printed.amount !== undefined) {
    const amount = amountOf(printed.amount);
    const code = bill.amount === null ? '(blank)' : formatAmount(bill.amount);
    if (amount === undefined || amount !== (bill.amount === null ? null : Math.round(bill.amount * 100)))
      differ('amount', printed.amount || '(blank)', code);
  }
  if (Array.isArray(printed.debtor)) {
    const mismatch = addressMismatch(printed.debtor, bill.ultimateDebtor, !receipt);
    if (mismatch) differ('debtor', mismatch.printed, mismatch.code);
  }
  return found;
}

/** The account or reference as compared: no spaces, upper case. */
const compact = (text: string): string => text.replace(/\s+/g, '').toUpperCase();

/** An IBAN or reference in groups of four as printed (a QR reference in groups of five after the first two digits). */
function spaced(value: string): string {
  if (/^[0-9]{27}$/.test(value)) return `${value.slice(0, 2)} ${value.slice(2).replace(/(.{5})(?=.)/g, '$1 ')}`;
  return value.replace(/(.{4})(?=.)/g, '$1 ');
}

/** Names and localities as compared: one form of each letter, lower case, single spaces. */
const plain = (text: string): string => text.normalize('NFC').toLowerCase().replace(/\s+/g, ' ').trim();

/**
 * The name (the printed lines start with it, however they wrap) and, where `locality` (the receipt may shorten an
 * address to its name), the locality (the lines end with it, after an optional country code such as "DE - "), or what
 * differs. An address with characters the text layer cannot tell (a font without a Unicode map) is not compared; a
 * "?" matches any one character (what a generator prints for a letter its font lacks).
 */
function addressMismatch(
  lines: string[],
  address: QrBillAddress | null,
  locality: boolean,
): { printed: string; code: string } | undefined {
  const text = plain(lines.join(' '));
  if (text.includes(UNREADABLE)) return undefined;
  if (!address) return text === '' ? undefined : { printed: lines.join(', '), code: '(none)' };
  const name = plain(address.name ?? '');
  const place =
    address.addressType === 'K' ? (address.addressLine2 ?? '') : `${address.postalCode ?? ''} ${address.city ?? ''}`;
  const sameName = matches(text.slice(0, name.length), name);
  const samePlace = !locality || matches(text.slice(Math.max(0, text.length - plain(place).length)), plain(place));
  if (sameName && samePlace) return undefined;
  return { printed: lines.join(', '), code: [address.name, place.trim()].filter(Boolean).join(', ') };
}

/** What the engine gives for a character it cannot map to Unicode. */
const UNREADABLE = '\uFFFD';

/** Equal, a "?" of the printed text matching any one character of the code's. */
function matches(printed: string, code: string): boolean {
  const [p, c] = [[...printed], [...code]];
  return p.length === c.length && p.every((char, i) => char === c[i] || char === '?');
}

/** A printed amount in cents: "1 949.75", "1'949.75", "1949.75"; null when blank; undefined when not an amount. */
function amountOf(text: string): number | null | undefined {
  const digits = text.replace(/[\s'’]/g, '');
  if (digits === '') return null;
  if (!/^[0-9]{1,9}(?:\.[0-9]{2})?$/.test(digits)) return undefined;
  return Math.round(Number(digits) * 100);
}

/** An amount as the IG prints it: a space between thousands, two decimals. */
function formatAmount(amount: number): string {
  const [whole, cents] = amount.toFixed(2).split('.') as [string, string];
  return `${whole.replace(/\B(?=([0-9]{3})+$)/g, ' ')}.${cents}`;
}
