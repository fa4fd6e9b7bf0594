import { checkSwissIban, type IbanProblem } from './iban.ts';
import { isValidCreditorReference, qrReferenceProblem } from './reference.ts';

/**
 * Reads one decoded QR text as a Swiss QR-bill (SIX IG QR-bill 2.2/2.3) and decides whether it is one the service
 * answers with. The reader is lenient where real bills deviate harmlessly (separators, trailing empty lines, K
 * addresses, the v2.3 character set, content of the optional trailing lines) and strict on what decides a payment
 * (docs/contract/http.md, "Extract"): header, structure, currency, amount, account and reference.
 */

/** Why a QR text is not a usable QR-bill; the extract route lists these per QR code in its 404 problem. */
export type QrBillRejection =
  | 'not-spc'
  | 'bad-header'
  | 'line-count'
  | 'no-trailer'
  | 'currency'
  | 'amount'
  | 'iban-country'
  | 'iban-checksum'
  | 'qrr-check-digit'
  | 'scor-checksum'
  | 'reference-kind';

// Field order here is the order of the HTTP response's JSON (it is serialized from these objects): do not reorder.
export interface QrBillAddress {
  addressType: 'S' | 'K';
  name: string | null;
  street: string | null;
  buildingNumber: string | null;
  addressLine1: string | null;
  addressLine2: string | null;
  postalCode: string | null;
  city: string | null;
  country: string | null;
}

export interface QrBill {
  qrType: string;
  version: string;
  codingType: string;
  iban: string;
  creditor: QrBillAddress;
  ultimateCreditor: QrBillAddress | null;
  amount: number | null;
  currency: string;
  ultimateDebtor: QrBillAddress | null;
  referenceType: string;
  reference: string | null;
  unstructuredMessage: string | null;
  billInformation: string | null;
  alternativeProcedureParameters: string | null;
}

export type QrBillReading = { ok: true; bill: QrBill } | { ok: false; reason: QrBillRejection; detail: string };

/** 31 mandatory lines up to the trailer `EPD`, then bill information and up to two alternative procedures. */
const MIN_LINES = 31;
const MAX_LINES = 34;

/** Only the major version is checked, as SIX advised Codecrete (letter of 5 August 2020): 0200, 0201, … all read. */
const VERSION = /^02[0-9]{2}$/;

/**
 * Amount: 1 to 9 integer digits, then optionally a point and one or two decimals; hence 0.00 to 999999999.99 and never
 * negative. The IG asks generators for exactly two decimals, but Codecrete's decoder (a lenient DecimalFormat parse)
 * and validator accept `50` and `50.5` as well, and these are unambiguous, so the reader takes them too. Refused are a
 * third decimal (Codecrete would round it; we will not guess what is owed), signs, exponents, grouping commas, a
 * decimal comma, and a point lacking a digit before or after it (`.50`, `50.`). `0.00` stands: notification bills (IG
 * 4.4) carry it. Leading zeros (`007.00`) are against the IG but harmless, and Codecrete reads them, so they stand too.
 */
const AMOUNT = /^[0-9]{1,9}(?:\.[0-9]{1,2})?$/;

/** Parses and validates one decoded QR text. */
export function readQrBill(text: string): QrBillReading {
  // Surrounding whitespace goes first, so a line of spaces counts as empty and a leading byte-order mark is no
  // obstacle.
  const lines = text.split(/\r\n|\r|\n/).map((l) => l.trim());
  while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  /** Line n as the IG numbers them (1-based); absent lines read as empty. */
  const line = (n: number): string => lines[n - 1] ?? '';

  // SPC first: a URL or an EPC (BCD) code is simply not a QR-bill, whatever its length.
  if (line(1) !== 'SPC')
    return reject('not-spc', 'The QR code is not a Swiss QR-bill (its data does not start with SPC).');
  // The header before the line count, so a code of another version is named as such rather than miscounted.
  if (lines.length >= 2 && !VERSION.test(line(2))) {
    return reject('bad-header', `The QR-bill version ${quoted(line(2))} is not supported (only 02xx versions are).`);
  }
  if (lines.length >= 3 && line(3) !== '1') {
    return reject('bad-header', `The QR-bill coding type ${quoted(line(3))} is not supported (only 1, UTF-8, is).`);
  }
  if (lines.length < MIN_LINES || lines.length > MAX_LINES) {
    return reject(
      'line-count',
      `The QR-bill data has ${lines.length} lines; a QR-bill has ${MIN_LINES} to ${MAX_LINES}.`,
    );
  }
  if (line(31) !== 'EPD') return reject('no-trailer', 'The QR-bill data lacks the EPD trailer on line 31.');

  const iban = line(4).replace(/\s+/g, '');
  const account = checkSwissIban(iban);
  if (!account.ok) return reject(IBAN_REASON[account.problem], ibanDetail(account.problem, iban));

  const amountText = line(19);
  if (amountText !== '' && !AMOUNT.test(amountText)) {
    return reject('amount', `The amount ${quoted(amountText)} is not a number from 0.00 to 999999999.99.`);
  }

  const currency = line(20);
  if (currency !== 'CHF' && currency !== 'EUR') {
    const detail =
      currency === '' ? 'The QR-bill has no currency.' : `The currency ${quoted(currency)} is not CHF or EUR.`;
    return reject('currency', detail);
  }

  const referenceType = line(28);
  const reference = line(29).replace(/\s+/g, '');
  const referenceRejection = checkReference(referenceType, reference, account.qrIban);
  if (referenceRejection) return referenceRejection;

  // Lines 32-34 are read by position and never reject: a generator that puts an alternative procedure on line 32
  // (swissqrbill 4.4.1 without bill information) yields it as bill information, which is what the code says.
  const alternatives = [line(33), line(34)].filter((l) => l !== '');
  return {
    ok: true,
    bill: {
      qrType: line(1),
      version: line(2),
      codingType: line(3),
      iban,
      creditor: readAddress(lines, 5),
      ultimateCreditor: readOptionalAddress(lines, 12),
      amount: amountText === '' ? null : Number.parseFloat(amountText),
      currency,
      ultimateDebtor: readOptionalAddress(lines, 21),
      referenceType,
      reference: reference === '' ? null : reference,
      unstructuredMessage: orNull(line(30)),
      billInformation: orNull(line(32)),
      alternativeProcedureParameters: alternatives.length > 0 ? alternatives.join('\n') : null,
    },
  };
}

const IBAN_REASON: Record<IbanProblem, QrBillRejection> = {
  missing: 'iban-country',
  country: 'iban-country',
  length: 'iban-checksum',
  'check-digits': 'iban-checksum',
};

function ibanDetail(problem: IbanProblem, iban: string): string {
  switch (problem) {
    case 'missing':
      return 'The QR-bill has no IBAN.';
    case 'country':
      return `The account ${quoted(iban)} is not a Swiss or Liechtenstein IBAN.`;
    case 'length':
      return `The IBAN ${quoted(iban)} does not have 21 characters.`;
    case 'check-digits':
      return `The IBAN ${quoted(iban)} has wrong check digits.`;
  }
}

/**
 * The reference must suit both its type and the account: a QR-IBAN takes only QR references, an ordinary IBAN only
 * creditor references or none. The pairing is checked before the reference's digits, so the clerk hears about the
 * mismatch (the bigger error) first.
 */
function checkReference(type: string, reference: string, qrIban: boolean): QrBillReading | null {
  switch (type) {
    case 'QRR': {
      if (!qrIban)
        return reject('reference-kind', 'A QR reference (QRR) needs a QR-IBAN, but the bill names an ordinary IBAN.');
      const problem = qrReferenceProblem(reference);
      if (problem === null) return null;
      const what = problem === 'format' ? 'is not 27 digits' : 'has a wrong check digit';
      return reject('qrr-check-digit', `The QR reference ${quoted(reference)} ${what}.`);
    }
    case 'SCOR':
      if (qrIban) {
        return reject(
          'reference-kind',
          'A QR-IBAN needs a QR reference (QRR), but the bill has a creditor reference (SCOR).',
        );
      }
      if (!isValidCreditorReference(reference)) {
        return reject('scor-checksum', `The creditor reference ${quoted(reference)} is not a valid RF reference.`);
      }
      return null;
    case 'NON':
      if (qrIban)
        return reject('reference-kind', 'A QR-IBAN needs a QR reference (QRR), but the bill has no reference (NON).');
      if (reference !== '')
        return reject('reference-kind', 'The reference type is NON, yet the bill carries a reference.');
      return null;
    default:
      return reject(
        'reference-kind',
        type === ''
          ? 'The QR-bill has no reference type.'
          : `The reference type ${quoted(type)} is not QRR, SCOR or NON.`,
      );
  }
}

/** Lines 12-18 and 21-27 are optional addresses: seven empty lines mean none. */
function readOptionalAddress(lines: string[], first: number): QrBillAddress | null {
  for (let i = 0; i < 7; i++) if ((lines[first - 1 + i] ?? '') !== '') return readAddress(lines, first);
  return null;
}

/**
 * Seven lines: type, name, street or address line 1, building number or address line 2, postal code, town, country.
 * Content is not validated (a tolerant reader). K (combined) addresses were dropped in IG 2.3 but old bills keep them.
 * A type that is neither S nor K is inferred: K when postal code and town are empty but the second address line is not
 * (the K layout), otherwise S, so every value lands in the field it most likely belongs to.
 */
function readAddress(lines: string[], first: number): QrBillAddress {
  const at = (offset: number): string | null => orNull(lines[first - 1 + offset] ?? '');
  const written = at(0);
  const looksCombined = at(4) === null && at(5) === null && at(3) !== null;
  const type = written === 'S' || written === 'K' ? written : looksCombined ? 'K' : 'S';
  const combined = type === 'K';
  return {
    addressType: type,
    name: at(1),
    street: combined ? null : at(2),
    buildingNumber: combined ? null : at(3),
    addressLine1: combined ? at(2) : null,
    addressLine2: combined ? at(3) : null,
    postalCode: combined ? null : at(4),
    city: combined ? null : at(5),
    country: at(6),
  };
}

const orNull = (value: string): string | null => (value === '' ? null : value);

/** A payload value in quotes for a detail sentence, cut short so no detail carries a long piece of the payload. */
function quoted(value: string, max = 40): string {
  const chars = Array.from(value); // by code point, so a cut never splits a surrogate pair
  return `"${chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : value}"`;
}

const reject = (reason: QrBillRejection, detail: string): QrBillReading => ({ ok: false, reason, detail });
