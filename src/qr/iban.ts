/**
 * IBAN checks a QR-bill needs (SIX IG QR-bill 2.2/2.3, §4.3.2): only Swiss and Liechtenstein accounts, whose IBANs have
 * 21 characters, and whether the account is a QR-IBAN.
 */

/**
 * ISO 7064 MOD 97-10 remainder of an alphanumeric string read as one number, letters counting A=10 … Z=35 (either case,
 * ASCII only). Null when another character occurs. Shared by IBANs (ISO 13616) and creditor references (ISO 11649).
 */
export function mod97(text: string): number | null {
  let rest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // Folding the remainder after each character keeps the number far below 2^53.
    if (c >= 48 && c <= 57) rest = (rest * 10 + (c - 48)) % 97;
    else if (c >= 65 && c <= 90) rest = (rest * 100 + (c - 55)) % 97;
    else if (c >= 97 && c <= 122) rest = (rest * 100 + (c - 87)) % 97;
    else return null;
  }
  return rest;
}

/** True when the string's first four characters moved to its end give MOD 97-10 remainder 1 (IBAN and RF rule). */
export function hasValidMod97(text: string): boolean {
  return text.length > 4 && mod97(text.slice(4) + text.slice(0, 4)) === 1;
}

/** Why an IBAN is unfit for a QR-bill, finest first; the bill reader turns these into rejection reasons and sentences. */
export type IbanProblem = 'missing' | 'country' | 'length' | 'check-digits';

export type IbanCheck = { ok: true; qrIban: boolean } | { ok: false; problem: IbanProblem };

/**
 * Checks an IBAN without spaces. Letters may come in either case: the check digits are defined on the letters, not on
 * their case, and a reader gains nothing by refusing `ch…`.
 */
export function checkSwissIban(iban: string): IbanCheck {
  if (iban === '') return { ok: false, problem: 'missing' };
  const upper = iban.toUpperCase();
  const country = upper.slice(0, 2);
  if (country !== 'CH' && country !== 'LI') return { ok: false, problem: 'country' };
  if (upper.length !== 21) return { ok: false, problem: 'length' };
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]{17}$/.test(upper) || !hasValidMod97(upper))
    return { ok: false, problem: 'check-digits' };
  return { ok: true, qrIban: isQrIban(upper) };
}

/** A QR-IBAN's institution id (IBAN positions 5-9) lies in 30000-31999, the range SIX reserved for QR references. */
export function isQrIban(iban: string): boolean {
  const iid = iban.slice(4, 9);
  if (!/^[0-9]{5}$/.test(iid)) return false;
  const id = Number(iid);
  return id >= 30000 && id <= 31999;
}
