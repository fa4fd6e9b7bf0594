/**
 * The layer rules of CONTRIBUTING.md that the type checker cannot see: no import cycles among the modules of src/
 * and tcp-bridge/, and the bridge reaches src/ only through the package imports `#idb` and `#idb/node`. The core's
 * freedom from Node is checked by tsconfig.core.json (npm run typecheck).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const PACKAGE_IMPORTS: Record<string, string> = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).imports;

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.ts$/.test(e.name) && !e.name.endsWith('.test.ts'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** Static and dynamic imports and re-exports, type-only ones included (a cycle of types is still a tangle). */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specifiers = [
    ...text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g),
  ].map((m) => m[1] ?? m[2]!);
  return specifiers.flatMap((s) => {
    if (s.startsWith('#')) return PACKAGE_IMPORTS[s] ? [relative(ROOT, join(ROOT, PACKAGE_IMPORTS[s]))] : [];
    return s.startsWith('.') ? [relative(ROOT, resolve(ROOT, dirname(file), s))] : [];
  });
}

const FILES = [...sources('src'), ...sources('tcp-bridge/src')];
const GRAPH = new Map(FILES.map((f) => [f, importsOf(f).filter((to) => to.endsWith('.ts'))]));

function cycles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    path.push(file);
    for (const next of GRAPH.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of FILES) if (!state.has(file)) visit(file);
  return found;
}

describe('module structure', () => {
  it('finds the modules and their imports', () => {
    expect(GRAPH.get('tcp-bridge/src/connection.ts')).toContain('tcp-bridge/src/streams.ts');
  });

  it('has no import cycle', () => {
    expect(cycles().map((c) => c.join(' -> '))).toEqual([]);
  });

  it('lets the bridge reach src/ only through #idb and #idb/node', () => {
    const climbs = sources('tcp-bridge').flatMap((file) =>
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(/from\s+'(\.[^']*)'/g)]
        .map((m) => m[1]!)
        .filter((s) => relative(ROOT, resolve(ROOT, dirname(file), s)).startsWith('src/'))
        .map((s) => `${file}: ${s}`),
    );
    expect(climbs).toEqual([]);
  });
});
