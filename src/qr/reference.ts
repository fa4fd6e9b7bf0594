import { hasValidMod97 } from './iban.ts';

/**
 * Payment references of a QR-bill (SIX IG QR-bill 2.2/2.3, §4.3.3 and annex B): the QR reference (QRR, the former ISR
 * reference) and the ISO 11649 creditor reference (SCOR). Both take the reference without spaces.
 */

/** Carry table of the modulo 10 recursive method (IG annex B). */
const MOD10_CARRY = [0, 9, 4, 6, 8, 2, 7, 1, 3, 5] as const;

/** The check digit the modulo 10 recursive method gives for a string of digits. */
export function mod10RecursiveCheckDigit(digits: string): number {
  let carry = 0;
  for (let i = 0; i < digits.length; i++) carry = MOD10_CARRY[(carry + digits.charCodeAt(i) - 48) % 10]!;
  return (10 - carry) % 10;
}

export type QrReferenceProblem = 'format' | 'check-digit';

/**
 * A QR reference is exactly 27 digits, the last being the modulo 10 recursive check digit of the first 26. Shorter
 * references are not padded with zeros (Codecrete's validator does): the reader reports the reference as it stands.
 */
export function qrReferenceProblem(reference: string): QrReferenceProblem | null {
  if (!/^[0-9]{27}$/.test(reference)) return 'format';
  return mod10RecursiveCheckDigit(reference.slice(0, 26)) === Number(reference[26]) ? null : 'check-digit';
}

/**
 * ISO 11649: `RF`, two check digits, then 1 to 21 letters or digits; with the first four characters moved to the end
 * and letters counted A=10 … Z=35, the number is 1 modulo 97. The body's letters may be lower case, as Codecrete allows.
 */
export function isValidCreditorReference(reference: string): boolean {
  return /^RF[0-9]{2}[A-Za-z0-9]{1,21}$/.test(reference) && hasValidMod97(reference);
}
