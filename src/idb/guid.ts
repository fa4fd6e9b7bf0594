/**
 * Guids as IIDBService reads and writes them, in one place: the canonical form is .NET's `Guid.ToString()`, the `d`
 * format in lower case, which file keys, request ids and every Guid the service answers use.
 */

/** The canonical form: `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, lower-case hex. */
export const GUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A Guid in the forms `new Guid(string)` reads (`d`, `n`: 32 digits, `b`: `{d}`, `p`: `(d)`), any case, spaces
 * around allowed, as the canonical form; undefined for anything else.
 */
export function parseGuid(text: string): string | undefined {
  let value = text.trim().toLowerCase();
  // The canonical form first: a client's GUIDs nearly always come so.
  if (GUID_PATTERN.test(value)) return value;
  if (/^\{.*\}$|^\(.*\)$/.test(value)) {
    value = value.slice(1, -1);
    if (!value.includes('-')) return undefined;
  }
  if (GUID_PATTERN.test(value)) return value;
  if (!/^[0-9a-f]{32}$/.test(value)) return undefined;
  return `${value.slice(0, 8)}-${value.slice(8, 12)}-${value.slice(12, 16)}-${value.slice(16, 20)}-${value.slice(20)}`;
}
