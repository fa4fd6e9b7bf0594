/**
 * The peers policy, in one place. A `*.peers.test.ts` suite declares the system peers it needs with `needPeers`:
 *
 * - on a developer's machine or a user's clone, a missing peer skips the suite (or the block) and prints one line
 *   naming the peer and how to install it;
 * - under `REQUIRE_PEERS=1` (set by `.ci/run`), a missing peer fails the run instead: CI on the project's machines
 *   cannot go green without Mono, PostgreSQL, Samba, the KDC, .NET or tshark.
 *
 * A peer that is installed but cannot start here (Samba without network namespaces, NuGet packages not served) is
 * reported through `peerUnavailable`, under the same rule.
 *
 * Adding a peer: one entry in PEERS whose `missing()` lists what is absent (Debian package names where there are
 * some), then `needPeers('<suite>', PEERS.<name>)` in the suite and its package in `.ci/run`'s list.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { sharedExists, sharedPath } from './corpus.ts';
import { dotnetVersion } from './peers/dotnet.ts';
import { krb5Missing } from './negotiate/krb5-realm.ts';
import { monoAvailable } from './peers/mono.ts';
import { postgresMissing } from './peers/postgres.ts';
import { sambaMissing } from './negotiate/samba-ad.ts';

export interface Peer {
  /** As the message names it: 'Mono', 'PostgreSQL', ... */
  readonly name: string;
  /** What is missing for it (packages, tools, conditions); empty when it is here. */
  missing(): readonly string[];
}

const PYTHON = '/usr/bin/python3';
const GSS_NTLMSSP_MECH = '/etc/gss/mech.d/mech.ntlmssp.conf';

const pythonImports = (module: string): boolean =>
  existsSync(PYTHON) && spawnSync(PYTHON, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0;

const onPath = (tool: string): boolean =>
  spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0;

/** Each probe runs once per test file, whoever asks (and only when asked: samba-ad.ts imports this module too). */
function peer(name: string, probe: () => readonly string[]): Peer {
  let found: readonly string[] | undefined;
  return { name, missing: () => (found ??= probe()) };
}

export const PEERS = {
  mono: peer('Mono', () => (monoAvailable() ? [] : ['mono-complete (svcutil, mcs, mono)'])),
  dotnet: peer('.NET SDK', () => (dotnetVersion() === undefined ? ['dotnet on PATH (the dotnet machine image)'] : [])),
  postgres: peer('PostgreSQL', () => postgresMissing()),
  /** MIT krb5 loads gss-ntlmssp through its mech file (Debian's gss-ntlmssp installs it): .NET's NTLM on Linux. */
  gssNtlmssp: peer('gss-ntlmssp', () => (existsSync(GSS_NTLMSSP_MECH) ? [] : ['gss-ntlmssp'])),
  /** The GSSAPI initiators of test/support/negotiate/nns-client.py: python3-gssapi with gss-ntlmssp. */
  gssInitiators: peer('python3-gssapi with gss-ntlmssp', () => [
    ...(pythonImports('gssapi') ? [] : ['python3-gssapi']),
    ...(existsSync(GSS_NTLMSSP_MECH) ? [] : ['gss-ntlmssp']),
  ]),
  impacket: peer('impacket', () => (pythonImports('impacket.ntlm') ? [] : ['python3-impacket'])),
  krb5: peer('an MIT KDC', () => krb5Missing()),
  samba: peer('Samba AD', () => sambaMissing()),
  tshark: peer('tshark', () => (onPath('tshark') ? [] : ['tshark'])),
  /** ../shared/babelfish: Babelfish for PostgreSQL, the TDS and T-SQL server of the SQL Server suites (support/peers/babelfish.ts). */
  babelfish: peer('Babelfish', () =>
    sharedExists('babelfish', 'start.sh')
      ? []
      : [`${sharedPath('babelfish')} (the team's prebuilt tree beside the clone)`],
  ),
  /** ../shared/nuget: the local NuGet feed of CoreWCF 1.8.0 and dotnet-svcutil 8.0.0 (its README says how they were built). */
  peerFeed: peer('the local NuGet feed', () =>
    sharedExists('nuget') ? [] : [`${sharedPath('nuget')} (CoreWCF and dotnet-svcutil, built beside the clone)`],
  ),
} satisfies Record<string, Peer>;

/** `REQUIRE_PEERS=1`: a missing peer fails instead of skipping (.ci/run sets it). */
export const peersRequired = (): boolean => process.env.REQUIRE_PEERS === '1';

export class PeerMissingError extends Error {
  override name = 'PeerMissingError';
}

const said = new Set<string>();

/**
 * What keeps `suite` from running here, as one sentence naming each missing peer ('' when all are here), for
 * `describe.skipIf(needPeers(...))`. The sentence is printed once per suite. Under REQUIRE_PEERS=1 it throws instead,
 * which fails the test file at collection.
 */
export function needPeers(suite: string, ...peers: Peer[]): string {
  const missing = peers.flatMap((p) => {
    const what = p.missing();
    return what.length > 0 ? [`${p.name} (missing ${what.join(', ')})`] : [];
  });
  if (missing.length === 0) return '';
  return peerUnavailable(suite, `needs ${missing.join('; ')}`);
}

/**
 * A peer that is installed but cannot run here (it failed to start, its packages are not served): returns `reason`
 * for `ctx.skip(reason)` after printing it, or throws under REQUIRE_PEERS=1.
 */
export function peerUnavailable(suite: string, reason: string): string {
  const line = `[${suite}] ${reason}`;
  if (peersRequired()) throw new PeerMissingError(`${line} (REQUIRE_PEERS=1: a missing peer fails the run)`);
  if (!said.has(line)) {
    said.add(line);
    console.warn(`${line}: skipped`);
  }
  return reason;
}
