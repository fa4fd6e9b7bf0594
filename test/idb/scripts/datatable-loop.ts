/**
 * Records the 100-row DataTable of ReturnDatatable over and over, one at a time, each dropped before the next, as the
 * service does per call (run by results-garbage.test.ts under `--trace-gc-nvp`).
 */
import type { StatementResult } from '../../../src/idb/database.ts';
import { dataTableOf } from '../../../src/idb/results.ts';

const rows = (call: number) =>
  Array.from({ length: 100 }, (_, i) => [
    i + call,
    `row ${i}`,
    i * 1.25,
    '2024-03-01 10:00:00',
    i % 2 === 0,
    `a note of some length for row ${i} of call ${call}`,
  ]);

const columns = [
  ['id', 'INTEGER'],
  ['name', 'VARCHAR(40)'],
  ['amount', 'DOUBLE PRECISION'],
  ['created', 'TIMESTAMP'],
  ['flag', 'BOOLEAN'],
  ['note', 'TEXT'],
].map(([name, declaredType]) => ({ name: name!, declaredType: declaredType! }));

let written = 0;
const calls = Number(process.argv[2] ?? 3000);
for (let call = 0; call < calls; call++) {
  const result: StatementResult = { columns, rows: rows(call), rowsAffected: -1 };
  const table = dataTableOf(result);
  // Kept until the next turn, as the bridge keeps a table until its reply is written; then nothing refers to it.
  written += table.events === undefined ? 0 : 1;
  // A turn of the event loop between calls, as between a client's calls.
  await new Promise((resolve) => setImmediate(resolve));
}
process.stdout.write(`tables ${written}\n`);
