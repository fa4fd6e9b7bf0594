/**
 * Conversions between the binary forms of MC-NBFX values and their XML text, as .NET's XmlConverter writes them
 * (invariant culture, xs: lexical forms): what a text XML encoder would have put on the wire for the same message.
 */

import { encodeBase64 } from '#idb';
import { BinaryXmlError } from './errors.ts';
import type { XmlText } from './nodes.ts';

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Guid bytes (Guid.ToByteArray order: the first three groups little-endian) to "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx". */
export function guidFromBytes(b: Uint8Array, at = 0): string {
  const h = (i: number): string => HEX[b[at + i]!]!;
  return (
    h(3) +
    h(2) +
    h(1) +
    h(0) +
    '-' +
    h(5) +
    h(4) +
    '-' +
    h(7) +
    h(6) +
    '-' +
    h(8) +
    h(9) +
    '-' +
    h(10) +
    h(11) +
    h(12) +
    h(13) +
    h(14) +
    h(15)
  );
}

/** Where each of a Guid's 16 bytes (ToByteArray order: Data1..3 little-endian) has its two digits in the `d` format. */
const GUID_DIGITS_AT = [6, 4, 2, 0, 11, 9, 16, 14, 19, 21, 24, 26, 28, 30, 32, 34];

/** A hex digit's value (either case), or -1. */
function hexDigit(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

/**
 * A Guid in the `d` format (any case) to its 16 bytes; undefined for anything else. `at`: where the Guid starts in
 * `value` (a UniqueId's after `urn:uuid:`), so no slice is made. Read digit by digit: every reply's RelatesTo comes
 * through here, and the regex, replace and parseInt per byte it replaced were 1.7% of the bridge's busy time.
 */
export function guidToBytes(value: string, at = 0): Uint8Array | undefined {
  if (value.length - at !== 36) return undefined;
  const hyphen = (i: number) => value.charCodeAt(at + i) === 0x2d;
  if (!hyphen(8) || !hyphen(13) || !hyphen(18) || !hyphen(23)) return undefined;
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i++) {
    const digits = at + GUID_DIGITS_AT[i]!;
    const high = hexDigit(value.charCodeAt(digits));
    const low = hexDigit(value.charCodeAt(digits + 1));
    if (high < 0 || low < 0) return undefined;
    bytes[i] = high * 16 + low;
  }
  return bytes;
}

export const UNIQUE_ID_PREFIX = 'urn:uuid:';

const MAX_DECIMAL_MANTISSA = (1n << 96n) - 1n;

/**
 * The 16 bytes of a .NET decimal (flags: 2 reserved bytes, scale, sign; then hi32, lo64, all little-endian) as text
 * that keeps the scale. Undefined for bytes System.Decimal refuses (reserved bits set, scale above 28).
 */
export function decimalFromBytes(b: Uint8Array, at = 0): string | undefined {
  const view = new DataView(b.buffer, b.byteOffset + at, 16);
  const scale = b[at + 2]!;
  const sign = b[at + 3]!;
  if (view.getUint16(0, true) !== 0 || scale > 28 || (sign !== 0 && sign !== 0x80)) return undefined;
  const mantissa = (BigInt(view.getUint32(4, true)) << 64n) | view.getBigUint64(8, true);
  let digits = mantissa.toString().padStart(scale + 1, '0');
  if (scale > 0) digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return sign ? `-${digits}` : digits;
}

export function decimalToBytes(value: string): Uint8Array | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(value);
  if (!m) return undefined;
  const fraction = m[3] ?? '';
  if (fraction.length > 28) return undefined;
  const mantissa = BigInt(m[2]! + fraction);
  if (mantissa > MAX_DECIMAL_MANTISSA) return undefined;
  const out = new Uint8Array(16);
  const view = new DataView(out.buffer);
  out[2] = fraction.length;
  out[3] = m[1] ? 0x80 : 0;
  view.setUint32(4, Number(mantissa >> 64n), true);
  view.setBigUint64(8, mantissa & 0xffffffffffffffffn, true);
  return out;
}

const TICKS_PER_DAY = 864_000_000_000n;
const TICKS_PER_SECOND = 10_000_000n;
const DAYS_TO_1970 = 719_162n;

function pad(n: number | bigint, width: number): string {
  return n.toString().padStart(width, '0');
}

/** The 7 tick digits after the second, trailing zeros dropped, with the dot; '' when whole. */
function fraction(ticks: bigint): string {
  if (ticks === 0n) return '';
  return `.${pad(ticks, 7).replace(/0+$/, '')}`;
}

/**
 * xs:dateTime as XmlConvert's RoundtripKind writes it: no suffix for Unspecified, Z for Utc. A Local value's ticks
 * are the UTC instant (ToBinary converted them), so it is written as that instant with Z rather than in a local
 * offset this process cannot know.
 */
export function formatDateTime(ticks: bigint, dateKind: number): string {
  const days = ticks / TICKS_PER_DAY;
  const inDay = ticks % TICKS_PER_DAY;
  const date = new Date(Number(days - DAYS_TO_1970) * 86_400_000);
  const seconds = inDay / TICKS_PER_SECOND;
  const text =
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1, 2)}-${pad(date.getUTCDate(), 2)}` +
    `T${pad(seconds / 3600n, 2)}:${pad((seconds / 60n) % 60n, 2)}:${pad(seconds % 60n, 2)}${fraction(inDay % TICKS_PER_SECOND)}`;
  return dateKind === 0 ? text : `${text}Z`;
}

/** xs:duration as XmlConvert.ToString(TimeSpan) writes it ("PT0S", "P1DT2H", "-PT0.5S"). */
export function formatTimeSpan(ticks: bigint): string {
  const negative = ticks < 0n;
  let rest = negative ? -ticks : ticks;
  const days = rest / TICKS_PER_DAY;
  rest %= TICKS_PER_DAY;
  const hours = rest / (3600n * TICKS_PER_SECOND);
  rest %= 3600n * TICKS_PER_SECOND;
  const minutes = rest / (60n * TICKS_PER_SECOND);
  rest %= 60n * TICKS_PER_SECOND;
  const seconds = rest / TICKS_PER_SECOND;
  const sub = rest % TICKS_PER_SECOND;
  let out = negative ? '-P' : 'P';
  if (days !== 0n) out += `${days}D`;
  if (hours !== 0n || minutes !== 0n || seconds !== 0n || sub !== 0n) {
    out += 'T';
    if (hours !== 0n) out += `${hours}H`;
    if (minutes !== 0n) out += `${minutes}M`;
    if (seconds !== 0n || sub !== 0n) out += `${seconds}${fraction(sub)}S`;
  } else if (days === 0n) {
    out += 'T0S';
  }
  return out;
}

/** A float or double as .NET's "R" format writes it (shortest round trip; E notation from 1E+15 and below 0.0001). */
export function formatFloat(value: number, single: boolean): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'INF';
  if (value === -Infinity) return '-INF';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  let exponential = value.toExponential();
  if (single) {
    for (let digits = 1; digits <= 9; digits++) {
      const candidate = value.toExponential(digits - 1);
      if (Math.fround(Number(candidate)) === value) {
        exponential = candidate;
        break;
      }
    }
  }
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(exponential)!;
  const sign = m[1]!;
  const digits = (m[2]! + (m[3] ?? '')).replace(/0+$/, '') || '0';
  const exponent = Number(m[4]);
  if (exponent >= 15 || exponent < -4) {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${mantissa}E${exponent < 0 ? '-' : '+'}${pad(Math.abs(exponent), 2)}`;
  }
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  if (digits.length <= exponent + 1) return `${sign}${digits}${'0'.repeat(exponent + 1 - digits.length)}`;
  return `${sign}${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
}

/** The characters a text record stands for (MC-NBFX 2.2.3): what an XML reader would report as the text. */
export function textToString(text: XmlText): string {
  switch (text.type) {
    case 'Zero':
      return '0';
    case 'One':
      return '1';
    case 'False':
      return 'false';
    case 'True':
      return 'true';
    case 'Empty':
      return '';
    case 'Int8':
    case 'Int16':
    case 'Int32':
    case 'Int64':
    case 'UInt64':
      return text.value.toString();
    case 'Float':
      return formatFloat(text.value, true);
    case 'Double':
      return formatFloat(text.value, false);
    case 'Decimal':
      // System.Decimal prints a negative zero without its sign.
      return /^-0(\.0*)?$/.test(text.value) ? text.value.slice(1) : text.value;
    case 'DateTime':
      return formatDateTime(text.ticks, text.dateKind);
    case 'TimeSpan':
      return formatTimeSpan(text.value);
    case 'Chars8':
    case 'Chars16':
    case 'Chars32':
    case 'UnicodeChars8':
    case 'UnicodeChars16':
    case 'UnicodeChars32':
    case 'Dictionary':
    case 'UniqueId':
    case 'Uuid':
      return text.value;
    case 'Bytes8':
    case 'Bytes16':
    case 'Bytes32':
      return encodeBase64(text.value);
    case 'Bool':
      return text.value ? 'true' : 'false';
    case 'QNameDictionary':
      return `${text.prefix}:${text.localName}`;
    case 'List':
      return text.items.map(textToString).join(' ');
  }
}

export function invalidDocument(message: string): BinaryXmlError {
  return new BinaryXmlError('InvalidDocument', message);
}
