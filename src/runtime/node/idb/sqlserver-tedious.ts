/**
 * tedious (pinned at 20.3.9) as the SQL Server adapter needs it. Loading this module once makes three changes:
 *
 * - Node 20 lacks `Promise.withResolvers`, which tedious 20 calls while connecting (it declares Node 22): a polyfill
 *   with the standard's behaviour is installed when it is missing.
 * - Exact values: tedious reads decimal, numeric and money as JavaScript numbers (a decimal(38,10) loses digits, and
 *   12.50 comes back as 12.5), datetimeoffset without its offset and date/time types as Dates rounded to the
 *   millisecond. SqlClient gives a .NET decimal with the column's scale, a DateTimeOffset with its offset and 100 ns
 *   ticks, so for those types the value parser tedious' row and return-value parsers call (`readValue`, looked up
 *   on its module at each call) is wrapped: they are decoded here from the TDS bytes into text (see decodeExact);
 *   every other type is left to tedious.
 * - Exact decimal parameters: tedious sends a decimal parameter from a JavaScript number; a decimal given as text
 *   (QueryParameter's decimal) is written here digit for digit at the precision and scale the adapter declares.
 * - ExecuteNonQuery's count: SqlClient adds up the DONE tokens' counts except those of SELECT statements
 *   (`curCmd` 0xC1); tedious does not pass `curCmd` on, so the request token handler notes it on the request
 *   (`lastCurCmd`) before it emits `done`, `doneInProc` or `doneProc`.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

interface Result {
  value: unknown;
  offset: number;
}
interface Helpers {
  Result: new (value: unknown, offset: number) => Result;
  readUInt8(buf: Buffer, offset: number): Result;
  readUInt16LE(buf: Buffer, offset: number): Result;
  readInt16LE(buf: Buffer, offset: number): Result;
  readInt32LE(buf: Buffer, offset: number): Result;
  readUInt32LE(buf: Buffer, offset: number): Result;
}
interface Metadata {
  type: { name: string };
  scale?: number;
}
type ReadValue = (buf: Buffer, offset: number, metadata: Metadata, options: unknown) => Result;

/** The DONE token's current-command value of a SELECT statement (MS-TDS 2.2.7.6). */
export const CUR_CMD_SELECT = 0xc1;

if (typeof (Promise as { withResolvers?: unknown }).withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    value<T>() {
      let resolve!: (value: T | PromiseLike<T>) => void;
      let reject!: (reason?: unknown) => void;
      const promise = new Promise<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

const helpers = require('tedious/lib/token/helpers.js') as Helpers;
const parser = require('tedious/lib/value-parser.js') as { readValue: ReadValue; __idbExact?: true };
const handler = require('tedious/lib/token/handler.js') as {
  RequestTokenHandler: { prototype: Record<string, (token: { curCmd?: number }) => void> };
};

interface Writer {
  writeUInt8(value: number): void;
  writeUInt32LE(value: number): void;
}
interface DecimalType {
  validate(value: unknown): unknown;
  writeValue(buffer: Writer, parameter: { value: unknown; precision: number; scale: number }): void;
}
const decimalType = require('tedious/lib/data-types/decimal.js') as DecimalType;
const { decimalLength } = require('tedious/lib/data-types/decimal-common.js') as {
  decimalLength(precision: number): number;
};
export const DECIMAL_TEXT = /^-?\d+(?:\.\d+)?$/;

if (!parser.__idbExact) {
  const validate = decimalType.validate;
  decimalType.validate = function (value) {
    return typeof value === 'string' && DECIMAL_TEXT.test(value) ? value : validate.call(this, value);
  };
  const writeValue = decimalType.writeValue;
  decimalType.writeValue = function (buffer, parameter) {
    if (typeof parameter.value !== 'string') return writeValue.call(this, buffer, parameter);
    const bytes = decimalLength(parameter.precision);
    const [whole, fraction = ''] = parameter.value.replace('-', '').split('.');
    let magnitude = BigInt(whole! + fraction.padEnd(parameter.scale, '0').slice(0, parameter.scale));
    if (magnitude >= 1n << BigInt(8 * bytes))
      throw new RangeError(
        `Value ${parameter.value} is out of range for decimal(${parameter.precision}, ${parameter.scale}).`,
      );
    buffer.writeUInt8(bytes + 1);
    buffer.writeUInt8(parameter.value.startsWith('-') ? 0 : 1);
    for (let i = 0; i < bytes / 4; i++) {
      buffer.writeUInt32LE(Number(magnitude & 0xffffffffn));
      magnitude >>= 32n;
    }
  };

  const original = parser.readValue;
  parser.readValue = (buf, offset, metadata, options) =>
    decodeExact(buf, offset, metadata) ?? original(buf, offset, metadata, options);
  parser.__idbExact = true;
  const proto = handler.RequestTokenHandler.prototype;
  for (const name of ['onDone', 'onDoneInProc', 'onDoneProc']) {
    const done = proto[name]!;
    proto[name] = function (this: { request: { lastCurCmd?: number } }, token) {
      this.request.lastCurCmd = token.curCmd;
      done.call(this, token);
    };
  }
}

/** The types decoded here, as text; undefined for the others (tedious reads them). */
function decodeExact(buf: Buffer, offset: number, metadata: Metadata): Result | undefined {
  const scale = metadata.scale ?? 0;
  switch (metadata.type.name) {
    case 'DecimalN':
    case 'NumericN':
      return withLength(buf, offset, (at, length) => numeric(buf, at, length, scale));
    case 'Money':
      return money(buf, offset, 8);
    case 'SmallMoney':
      return money(buf, offset, 4);
    case 'MoneyN':
      return withLength(buf, offset, (at, length) => money(buf, at, length));
    case 'Date':
      return withLength(buf, offset, (at) => ok(dateText(uint(buf, at, 3)), at + 3));
    case 'Time':
      return withLength(buf, offset, (at, length) => ok(timeText(ticks(buf, at, length, scale)), at + length));
    case 'DateTime2':
      return withLength(buf, offset, (at, length) => {
        const time = ticks(buf, at, length - 3, scale);
        return ok(`${dateText(uint(buf, at + length - 3, 3))} ${timeText(time)}`, at + length);
      });
    case 'DateTimeOffset':
      return withLength(buf, offset, (at, length) => {
        const time = ticks(buf, at, length - 5, scale);
        const days = uint(buf, at + length - 5, 3);
        const minutes = buf.readInt16LE(at + length - 2);
        return ok(offsetText(days, time, minutes), at + length);
      });
    case 'DateTime':
      return legacyDateTime(buf, offset, 8);
    case 'SmallDateTime':
      return legacyDateTime(buf, offset, 4);
    case 'DateTimeN':
      return withLength(buf, offset, (at, length) => legacyDateTime(buf, at, length));
    default:
      return undefined;
  }
}

/** A value led by its length byte (0: NULL); `read` gets the offset after it. */
function withLength(buf: Buffer, offset: number, read: (at: number, length: number) => Result): Result {
  const length = helpers.readUInt8(buf, offset);
  if (length.value === 0) return ok(null, length.offset);
  need(buf, length.offset, length.value as number);
  return read(length.offset, length.value as number);
}

function need(buf: Buffer, offset: number, bytes: number): void {
  // Throws tedious' NotEnoughDataError: its parser waits for more bytes and calls again.
  if (bytes > 0) helpers.readUInt8(buf, offset + bytes - 1);
}

const ok = (value: unknown, offset: number): Result => new helpers.Result(value, offset);

function uint(buf: Buffer, at: number, bytes: number): number {
  let n = 0;
  for (let i = bytes - 1; i >= 0; i--) n = n * 256 + buf[at + i]!;
  return n;
}

/** A little-endian unsigned integer of any width, as a bigint. */
function bigUint(buf: Buffer, at: number, bytes: number): bigint {
  let n = 0n;
  for (let i = bytes - 1; i >= 0; i--) n = (n << 8n) | BigInt(buf[at + i]!);
  return n;
}

/** An integer scaled by 10^-scale as decimal text, every digit and the scale kept (`12.50`). */
export function scaledText(n: bigint, scale: number): string {
  const negative = n < 0n;
  const digits = (negative ? -n : n).toString().padStart(scale + 1, '0');
  const text = scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

function numeric(buf: Buffer, at: number, length: number, scale: number): Result {
  const magnitude = bigUint(buf, at + 1, length - 1);
  return ok(scaledText(buf[at] === 1 ? magnitude : -magnitude, scale), at + length);
}

/** money: the high 32 bits first, then the low; smallmoney: 32 bits. Both in ten-thousandths. */
function money(buf: Buffer, at: number, length: number): Result {
  need(buf, at, length);
  const n =
    length === 4
      ? BigInt(buf.readInt32LE(at))
      : (BigInt(buf.readInt32LE(at)) << 32n) | BigInt(buf.readUInt32LE(at + 4));
  return ok(scaledText(n, 4), at + length);
}

/** A time's 100 ns ticks since midnight from its 3 to 5 bytes in units of 10^-scale s. */
function ticks(buf: Buffer, at: number, bytes: number, scale: number): number {
  return uint(buf, at, bytes) * 10 ** (7 - scale);
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** `hh:mm:ss.fffffff` of 100 ns ticks (less than a day). */
function timeText(t: number): string {
  const seconds = Math.floor(t / 1e7);
  return `${pad(Math.floor(seconds / 3600))}:${pad(Math.floor(seconds / 60) % 60)}:${pad(seconds % 60)}.${pad(t % 1e7, 7)}`;
}

/** `yyyy-MM-dd` of days since 0001-01-01. */
function dateText(days: number): string {
  const d = new Date(Date.UTC(2000, 0, 1) + (days - 730119) * 86_400_000);
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** The local wall clock and its offset: `yyyy-MM-dd hh:mm:ss.fffffff+hh:mm` (TDS sends the UTC time and the offset). */
function offsetText(days: number, time: number, minutes: number): string {
  const dayTicks = 864_000_000_000;
  let t = time + minutes * 600_000_000;
  let d = days;
  while (t < 0) {
    t += dayTicks;
    d--;
  }
  while (t >= dayTicks) {
    t -= dayTicks;
    d++;
  }
  const abs = Math.abs(minutes);
  return `${dateText(d)} ${timeText(t)}${minutes < 0 ? '-' : '+'}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

/**
 * datetime (days since 1900-01-01 and 1/300 s) and smalldatetime (days and minutes), converted as SqlDateTime does:
 * the 1/300 s ticks rounded to whole milliseconds.
 */
function legacyDateTime(buf: Buffer, at: number, length: number): Result {
  need(buf, at, length);
  const base = 693_595; // days from 0001-01-01 to 1900-01-01
  if (length === 4) {
    const minutes = buf.readUInt16LE(at + 2);
    return ok(`${dateText(base + buf.readUInt16LE(at))} ${timeText(minutes * 600_000_000)}`, at + 4);
  }
  const days = buf.readInt32LE(at);
  const ms = Math.floor(buf.readUInt32LE(at + 4) / 0.3 + 0.5);
  let d = base + days;
  let t = ms * 10_000;
  if (t >= 864_000_000_000) {
    t -= 864_000_000_000;
    d++;
  }
  return ok(`${dateText(d)} ${timeText(t)}`, at + 8);
}
