/**
 * The xs lexical forms (tcp-bridge/src/soap/xsd.ts): xs:dateTime to DateTime ticks and kind and back, and Guid in the forms .NET accepts.
 */
import { describe, expect, it } from 'vitest';
import { formatDateTime } from '../../../tcp-bridge/src/binary-xml/index.ts';
import { parseDateTime, parseGuid } from '../../../tcp-bridge/src/soap/xsd.ts';
import { GUID_A, TICKS_2022 } from './helpers.ts';

describe('xs lexical forms', () => {
  it('turns xs:dateTime into DateTime ticks and kind and back, over the whole DateTime range', () => {
    for (const value of [
      '0001-01-01T00:00:00',
      '9999-12-31T23:59:59.9999999Z',
      '1969-12-31T23:59:59.5',
      '0099-03-01T00:00:00Z',
      '2000-02-29T12:00:00Z',
    ]) {
      const parsed = parseDateTime(value)!;
      expect(formatDateTime(parsed.ticks, parsed.dateKind), value).toBe(value);
    }
    expect(parseDateTime('2022-01-01T00:00:00')).toEqual({ ticks: TICKS_2022, dateKind: 0 });
    expect(parseDateTime('2022-01-01T01:30:00+01:30')).toEqual({ ticks: TICKS_2022, dateKind: 2 });
    for (const bad of [
      '0000-01-01T00:00:00',
      '2001-02-29T00:00:00',
      '2022-01-01T00:00:60',
      '2022-01-01T00:00:00+15:00',
      '2022-01-01 00:00:00',
    ]) {
      expect(parseDateTime(bad), bad).toBeUndefined();
    }
  });

  it('reads a Guid in the forms new Guid(string) accepts', () => {
    for (const form of [
      GUID_A,
      GUID_A.toUpperCase(),
      GUID_A.replace(/-/g, ''),
      `{${GUID_A}}`,
      `(${GUID_A})`,
      ` ${GUID_A} `,
    ])
      expect(parseGuid(form), form).toBe(GUID_A);
    for (const bad of [`{${GUID_A.replace(/-/g, '')}}`, `${GUID_A}0`, `{${GUID_A})`, ''])
      expect(parseGuid(bad), bad).toBeUndefined();
  });
});
