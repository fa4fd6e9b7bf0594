import { describe, expect, it } from 'vitest';
import { formatCell, writeDataTable } from '../../src/idb/datatable.ts';
import { formatTimeSpan } from '../../src/idb/datatable-timespan.ts';

// SQL Server's column types in the DataTable (Byte, DateTimeOffset, TimeSpan); the real check is Microsoft's WCF
// client reading them (test/bridge/dotnet-sqlserver.peers.test.ts), this pins the text.
describe('DataTable columns SQL Server adds', () => {
  it('writes TimeSpan as XmlConvert does (xs:duration)', () => {
    expect(formatTimeSpan('12:34:56.1250000')).toBe('PT12H34M56.125S');
    expect(formatTimeSpan('00:00:00.0000000')).toBe('PT0S');
    expect(formatTimeSpan('01:00:00')).toBe('PT1H');
    expect(formatTimeSpan('1.00:00:05')).toBe('P1DT5S');
    expect(formatTimeSpan('not a time')).toBeUndefined();
  });

  it('writes DateTimeOffset with its own offset, and Byte in range', () => {
    const dto = { name: 'o', type: 'DateTimeOffset' as const };
    expect(formatCell(dto, '2024-02-29 23:59:59.5000000+05:30')).toBe('2024-02-29T23:59:59.5+05:30');
    expect(formatCell(dto, '2024-02-29 23:59:59.0000000+00:00')).toBe('2024-02-29T23:59:59+00:00');
    const byte = { name: 'b', type: 'Byte' as const };
    expect(formatCell(byte, 255)).toBe('255');
    expect(() => formatCell(byte, 256)).toThrow(/does not fit Byte/);
    const xml = writeDataTable(
      [byte, dto, { name: 't', type: 'TimeSpan' }],
      [[7, '2024-01-01 00:00:00.0000000-08:00', '00:01:00.0000000']],
    );
    expect(xml).toContain('<xs:element name="b" type="xs:unsignedByte" minOccurs="0" />');
    expect(xml).toMatch(
      /<xs:element name="o" msdata:DataType="System.DateTimeOffset, mscorlib[^"]*" type="xs:anyType"/,
    );
    expect(xml).toContain('<xs:element name="t" type="xs:duration" minOccurs="0" />');
    expect(xml).toContain('<b>7</b><o>2024-01-01T00:00:00-08:00</o><t>PT1M</t>');
  });
});
