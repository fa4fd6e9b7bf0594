/**
 * A call's DataTable dies young: nothing of it may outlive the call in the old generation. An object that V8 places
 * there (a getter of an object literal, say) and that points at the table keeps it through every scavenge until the
 * next full collection, and the table is promoted: measured 2.2–3.3 MB per scavenge on the 100-row bench table
 * (decision record, 2026-11-28, eighth session). Read from V8's own trace: the bytes promoted by each scavenge once the
 * code has warmed up.
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');
const script = join(projectRoot, 'test/idb/scripts/datatable-loop.ts');

it('promotes nothing of the DataTables it records, one call after another', async () => {
  const child = spawn(process.execPath, ['--trace-gc-nvp', '--import', 'tsx', script, '6000'], {
    cwd: projectRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  expect(code, output.slice(-2000)).toBe(0);
  expect(output).toContain('tables 6000');
  const scavenges = output
    .split('\n')
    .filter((line) => / gc=s /.test(line))
    .map((line) => ({
      allocated: Number(/ allocated=(\d+)/.exec(line)?.[1]),
      promoted: Number(/ promoted=(\d+)/.exec(line)?.[1]),
    }));
  // The first third carry what start-up keeps (modules, compiled code); the median of the rest, by the share of what
  // was allocated since the scavenge before that it promoted (~0.03% now, 16–35% with the table promoted).
  const warm = scavenges.slice(Math.floor(scavenges.length / 3)).map((s) => s.promoted / s.allocated);
  expect(warm.length).toBeGreaterThanOrEqual(5);
  const median = warm.sort((a, b) => a - b)[Math.floor(warm.length / 2)]!;
  expect(median).toBeLessThan(0.05);
}, 60_000);
