/**
 * The peers policy (test/support/peers.ts): a missing peer skips with a message naming it, or fails the run under
 * REQUIRE_PEERS=1, which .ci/run sets; and every peers suite goes through that module, so none can fail for want of
 * a peer nor pass silently without one.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { needPeers, PEERS, type Peer, PeerMissingError, peerUnavailable } from '../support/peers.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const absent: Peer = { name: 'Frobnicator', missing: () => ['frob-tools (frob)'] };
const present: Peer = { name: 'Here', missing: () => [] };

describe('needPeers', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it('answers nothing when every peer is here, so describe.skipIf runs the suite', () => {
    vi.stubEnv('REQUIRE_PEERS', '1');
    expect(needPeers('a suite', present)).toBe('');
  });

  it('names each missing peer and what it lacks, and prints it once', () => {
    vi.stubEnv('REQUIRE_PEERS', '');
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const reason = needPeers('suite one', present, absent);
    expect(reason).toBe('needs Frobnicator (missing frob-tools (frob))');
    needPeers('suite one', present, absent);
    expect(warn.mock.calls).toEqual([['[suite one] needs Frobnicator (missing frob-tools (frob)): skipped']]);
  });

  it('fails under REQUIRE_PEERS=1, naming the suite and the peer', () => {
    vi.stubEnv('REQUIRE_PEERS', '1');
    expect(() => needPeers('suite two', absent)).toThrow(PeerMissingError);
    expect(() => needPeers('suite two', absent)).toThrow(/\[suite two\] needs Frobnicator .*REQUIRE_PEERS=1/);
    expect(() => peerUnavailable('suite two', 'Samba AD could not start')).toThrow(/Samba AD could not start/);
  });

  it('probes the real peers by what they lack (a PATH without them lacks them all)', () => {
    const probe = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `import('./test/support/peers.ts').then(({ PEERS }) => console.log(JSON.stringify(
          Object.fromEntries(['mono', 'dotnet', 'tshark'].map((k) => [k, PEERS[k].missing()])))))`,
      ],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PATH: '/nonexistent' } },
    );
    expect(probe.stderr).toBe('');
    expect(JSON.parse(probe.stdout)).toEqual({
      mono: ['mono-complete (svcutil, mcs, mono)'],
      dotnet: ['dotnet on PATH (the dotnet machine image)'],
      tshark: ['tshark'],
    });
    expect(Object.keys(PEERS).sort()).toEqual(
      [
        'babelfish',
        'dotnet',
        'gssInitiators',
        'gssNtlmssp',
        'impacket',
        'krb5',
        'mono',
        'peerFeed',
        'postgres',
        'samba',
        'tshark',
      ].sort(),
    );
  });
});

describe('every peers suite', () => {
  const suites = readdirSync(ROOT, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith('.peers.test.ts') && !e.parentPath.includes('node_modules'))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));

  it('is found', () => expect(suites.length).toBeGreaterThan(10));

  it.each(suites)('%s declares its peers through test/support/peers.ts', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    // needPeers directly, or the Samba and backend helpers that call it.
    expect(text).toMatch(/\bneedPeers\(|\bdescribeSamba\(|\bbridgeBackends\(/);
    expect(text).not.toMatch(/console\.warn\([^)]*skipped/);
  });

  it('.ci/run requires them', () => {
    expect(readFileSync(join(ROOT, '.ci', 'run'), 'utf8')).toMatch(/^export REQUIRE_PEERS=1$/m);
  });
});
