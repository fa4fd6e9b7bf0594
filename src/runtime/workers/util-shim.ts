/**
 * What prom-client's Registry, Counter, Gauge and Histogram modules take from Node's `util`: `format` and `inspect`, to
 * write the message of an error for a value that is not a number or a label that is not declared. wrangler.toml's
 * `[alias]` hands them this instead, so the Worker needs no `nodejs_compat` (which would make the PDFium glue take its
 * Node code path).
 */
export function inspect(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

export function format(...values: unknown[]): string {
  return values.map((v) => (typeof v === 'string' ? v : inspect(v))).join(' ');
}

export default { format, inspect };
