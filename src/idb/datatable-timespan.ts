/** TimeSpan cells of a DataTable (SQL Server's `time`), written as .NET writes them. */

/**
 * XmlConvert.ToString(TimeSpan), an xs:duration: `PT1H2M3.5S`, `PT0S` for zero, days as `P1DT…`. From the text
 * `[-][d.]hh:mm:ss[.fffffff]` (SQL Server's time, a non-negative time of day).
 */
export function formatTimeSpan(cell: unknown): string | undefined {
  const m = typeof cell === 'string' ? /^(-)?(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,7}))?$/.exec(cell) : null;
  if (!m) return undefined;
  const [days, hours, minutes, seconds] = [2, 3, 4, 5].map((i) => Number(m[i] ?? 0)) as [
    number,
    number,
    number,
    number,
  ];
  const fraction = (m[6] ?? '').replace(/0+$/, '');
  let out = `${m[1] ?? ''}P${days > 0 ? `${days}D` : ''}`;
  const time = `${hours > 0 ? `${hours}H` : ''}${minutes > 0 ? `${minutes}M` : ''}${seconds > 0 || fraction ? `${seconds}${fraction ? `.${fraction}` : ''}S` : ''}`;
  if (time !== '') out += `T${time}`;
  else if (days === 0) out += 'T0S';
  return out;
}
