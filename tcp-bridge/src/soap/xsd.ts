/**
 * XML Schema lexical forms as .NET's XmlConvert reads them (surrounding whitespace allowed), for values that arrive
 * as text instead of typed binary records. Each parser returns undefined for text the type does not accept.
 */
import type { DateTimeKind, DateTimeValue } from '../binary-xml/index.ts';

const INTEGER = /^[+-]?\d+$/;

export function parseInteger(text: string, min: bigint, max: bigint): bigint | undefined {
  const value = text.trim();
  if (!INTEGER.test(value)) return undefined;
  const n = BigInt(value);
  return n < min || n > max ? undefined : n;
}

const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?$/;
const DECIMAL_MAX = 79228162514264337593543950335n;

/** xs:decimal within System.Decimal's range, written back with its scale: "+1.50" → "1.50", ".5" → "0.5". */
export function parseDecimal(text: string): string | undefined {
  const m = DECIMAL.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const integer = BigInt(m[2] || '0');
  if (integer > DECIMAL_MAX) return undefined;
  const fraction = m[3] ?? '';
  return `${m[1] === '-' ? '-' : ''}${integer}${fraction === '' ? '' : `.${fraction}`}`;
}

const FLOATING = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** xs:double / xs:float: INF, -INF, NaN or a decimal with an optional exponent (overflow gives ±Infinity). */
export function parseDouble(text: string): number | undefined {
  const value = text.trim();
  if (value === 'INF') return Infinity;
  if (value === '-INF') return -Infinity;
  if (value === 'NaN') return NaN;
  return FLOATING.test(value) ? Number(value) : undefined;
}

/** A Guid in the forms `new Guid(string)` reads, as lower-case d: the core's (src/idb/guid.ts). */
export { parseGuid } from '#idb';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Base64 with padding; whitespace anywhere is passed over, as Convert.FromBase64String does. */
export function parseBase64(text: string): Uint8Array | undefined {
  const value = text.replace(/[ \t\r\n]/g, '');
  if (!BASE64.test(value)) return undefined;
  const binary = atob(value);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

const TICKS_PER_SECOND = 10_000_000n;
const TICKS_PER_MINUTE = 60n * TICKS_PER_SECOND;
const TICKS_PER_DAY = 86_400n * TICKS_PER_SECOND;
const DAYS_TO_1970 = 719_162n;
/** DateTime.MaxValue.Ticks + 1. */
export const DATE_TIME_TICKS_END = 3_155_378_976_000_000_000n;

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})?$/;

/**
 * xs:dateTime as a .NET DateTime: no zone is Kind Unspecified, `Z` Utc, an offset Local with the ticks of the UTC
 * instant (what ToBinary puts in a DateTime record). Digits past the 7th (100 ns) are cut. Only the dateTime form:
 * WCF clients send a DateTime record or this; the date-only and other xs forms are refused.
 */
export function parseDateTime(text: string): DateTimeValue | undefined {
  const m = DATE_TIME.exec(text.trim());
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  if (
    year < 1 ||
    date.getUTCMonth() !== month - 1 ||
    date.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return undefined;
  const days = BigInt(Math.round(date.getTime() / 86_400_000)) + DAYS_TO_1970;
  let ticks =
    days * TICKS_PER_DAY +
    BigInt((hour * 60 + minute) * 60 + second) * TICKS_PER_SECOND +
    BigInt((m[7] ?? '').slice(0, 7).padEnd(7, '0'));
  const zone = m[8];
  let dateKind: DateTimeKind = 0;
  if (zone === 'Z') dateKind = 1;
  else if (zone !== undefined) {
    const hours = Number(zone.slice(1, 3));
    const minutes = Number(zone.slice(4, 6));
    if (hours > 14 || minutes > 59) return undefined;
    const offset = BigInt(hours * 60 + minutes) * TICKS_PER_MINUTE;
    ticks += zone[0] === '-' ? offset : -offset;
    dateKind = 2;
  }
  return { ticks, dateKind };
}
