/**
 * No comment names a file that does not exist. Comments and documents point readers at files ("the rules of
 * docs/contract/windows-security.md", "see support/negotiate/krb5-realm.ts"); when a file moves or goes, those pointers
 * rot silently. Every word in a comment (or a Markdown document) that looks like a path to a file of ours must name
 * one: relative to the repository, to the commenting file's folder or one of its parents, or, for a bare name, any file
 * in the tree. `../shared/...` must exist when ../shared is there, and may not name what the repository now carries
 * (the contract, the net.tcp captures).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '..', '..');
const SHARED = resolve(ROOT, '..', 'shared');
const TRACKED = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
  cwd: ROOT,
  encoding: 'utf8',
})
  .split('\n')
  .filter((f) => f && existsSync(join(ROOT, f)));
const NAMES = new Set(TRACKED.map((f) => basename(f)));

/** Files whose comments are read: our sources, scripts and documents; not generated files or fixtures. */
const SCANNED = TRACKED.filter(
  (f) =>
    /\.(ts|cs|sh|py|md|csproj)$/.test(f) &&
    !f.startsWith('test/fixtures/') &&
    f !== 'tcp-bridge/src/binary-xml/static-dictionary.ts' &&
    f !== 'test/runtimes/workers/node-answers.ts',
);

/** Names of files outside the repository that comments mention on purpose (system files, files made at run time). */
const ELSEWHERE = new Set([
  // dotnet/wcf and referencesource, read there
  'TransportDefaults.cs',
  'FramingDecoders.cs',
  'FramingFormat.cs',
  'XmlBufferReader.cs',
  'XmlBinaryNodeType.cs',
  'ServiceModelStringsVersion1.cs',
  'SocketConnection.cs',
  // files a user or a tool writes at run time
  'roles.json',
  'Client.cs', // NSwag's generated client (test/support/peers/generated-clients.ts)
  'Reference.cs', // dotnet-svcutil's generated proxy (test/support/peers/dotnet-svcutil.ts)
  'RUN/env.sh',
  'src/stray.ts', // CONTRIBUTING's example of what the core's type check refuses
]);

/** The comments of a source file, or the whole of a Markdown document. */
function commentsOf(file: string, text: string): string {
  if (file.endsWith('.md')) return text;
  if (file.endsWith('.sh') || file.endsWith('.py')) return [...text.matchAll(/#(.*)$/gm)].map((m) => m[1]).join('\n');
  if (file.endsWith('.csproj')) return [...text.matchAll(/<!--([\s\S]*?)-->/g)].map((m) => m[1]).join('\n');
  return [...text.matchAll(/\/\*[\s\S]*?\*\/|(?<![:'"`\w])\/\/.*$/gm)].map((m) => m[0]).join('\n');
}

const PATH =
  /(?<![\w/.@:-])((?:\.{1,2}\/)*(?:[\w.-]+\/)*\w[\w-]*(?:\.[\w-]+)*\.(?:ts|md|cs|sh|py|csproj|pcap|json))(?![\w/(])/g;

/**
 * `../shared/x` in ../shared; a bare name anywhere in the tree (JSON names are a corpus's or a user's: not checked);
 * a path from the file's folder or a parent, or the tail of a tracked path (`ntlm/checks.ts`, `pdf/validate.ts`).
 */
function resolves(file: string, path: string): boolean {
  if (ELSEWHERE.has(path)) return true;
  if (path.startsWith('../shared/')) return !existsSync(SHARED) || existsSync(join(SHARED, path.slice(10)));
  if (!path.includes('/')) return NAMES.has(path) || path.endsWith('.json');
  for (let dir = dirname(join(ROOT, file)); dir.startsWith(ROOT); dir = dirname(dir))
    if (existsSync(join(dir, path))) return true;
  const tail = `/${path.replace(/^(\.\.?\/)+/, '')}`;
  return TRACKED.some((f) => `/${f}`.endsWith(tail));
}

describe('paths named in comments', () => {
  it('scans the tree', () => expect(SCANNED.length).toBeGreaterThan(200));

  it('name files that exist', () => {
    const missing: string[] = [];
    for (const file of SCANNED) {
      const text = commentsOf(file, readFileSync(join(ROOT, file), 'utf8'));
      for (const [, path] of text.matchAll(PATH))
        if (path && !/^https?:/.test(path) && !resolves(file, path)) missing.push(`${file}: ${path}`);
    }
    expect(missing).toEqual([]);
  });

  it('cite the contract and the captures in the repository, not beside it', () => {
    const outside: string[] = [];
    for (const file of SCANNED) {
      const text = commentsOf(file, readFileSync(join(ROOT, file), 'utf8'));
      // The spec and the NTLM notes, and the session captures, as they were cited before the repository had them.
      for (const m of text.matchAll(
        /(?:\.\.\/shared\/)?(?:spec\/[A-Z]+\.md|notes\/windows-auth\.md|fixtures\/nettcp\/?[\w.-]*)/g,
      ))
        if (/^spec\/|^\.\.\/shared\/(spec|notes|fixtures\/nettcp\/?($|[\w-]+\.pcap))/.test(m[0]))
          outside.push(`${file}: ${m[0]}`);
    }
    expect(outside).toEqual([]);
  });
});
