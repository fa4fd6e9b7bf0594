/**
 * A throwaway Samba Active Directory domain for the tests (test/support/negotiate/samba-ad.sh): realm SAMDOM.TEST,
 * NetBIOS domain SAMDOM, its DC in a network namespace of its own (so ports 88, 389, 445, ... clash with nothing, the
 * MIT test realm of krb5-realm.ts included), the accounts listed in samba-ad.sh and in `SAMBA_USERS` below.
 *
 * Provisioning (~6-9 s on 2 cores) happens once per version of samba-ad.sh: the provisioned domain is cached in
 * `$TMPDIR/samba-ad-<hash of samba-ad.sh>/template` (one suite provisions, the others wait) and every suite starts
 * its own DC from a copy (~1-2 s), so suites running in parallel never share a database. `startSambaDomain()` throws SambaUnavailable (with the reason) where
 * Samba cannot run: not root, no `ip netns`, packages missing; `describeSamba` and `startSambaForSuite` turn that into
 * a skipped suite with a visible message (test/support/peers.ts).
 *
 * Needs the Debian packages samba (samba, samba-tool), winbind (winbindd, wbinfo, ntlm_auth), smbclient (net),
 * ldb-tools (ldbmodify, ldbsearch), libnss-wrapper, krb5-user (kinit, kvno), iproute2 (ip), and root.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { needPeers, PEERS, peerUnavailable } from '../peers.ts';

const PATH = `/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin${process.env.PATH ? `:${process.env.PATH}` : ''}`;
export const SAMBA_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'samba-ad.sh');

export const SAMBA_REALM = 'SAMDOM.TEST';
export const SAMBA_DOMAIN = 'SAMDOM';
export const SAMBA_BASE_DN = 'DC=samdom,DC=test';
/** The bridge's DNS identity in this domain: svc-idb holds host/idb.samdom.test. */
export const SAMBA_DNS_IDENTITY = 'idb.samdom.test';
/** RC4-only service: svc-legacy holds host/legacy.samdom.test. */
export const SAMBA_LEGACY_DNS = 'legacy.samdom.test';
export const SAMBA_DC_HOST = 'dc1.samdom.test';

export const SAMBA_USERS = {
  admin: { name: 'Administrator', password: 'Admin-Pass1' },
  /** idb-team, and through it idb-readers and idb-all (universal). */
  alice: { name: 'alice', password: 'Alice-Pass1' },
  /** idb-writers (domain local). */
  bob: { name: 'bob', password: 'Bob-Pass1' },
  /** Disabled. */
  carol: { name: 'carol', password: 'Carol-Pass1' },
  /** Password expired (must change at next logon). */
  dave: { name: 'dave', password: 'Dave-Pass1' },
  /** Service account of the bridge (SPN host/idb.samdom.test); also the LDAP bind account. */
  svcIdb: { name: 'svc-idb', password: 'Svc-Idb-Pass1' },
  svcLegacy: { name: 'svc-legacy', password: 'Svc-Legacy-Pass1' },
} as const;

export const SAMBA_GROUPS = ['idb-team', 'idb-readers', 'idb-all', 'idb-writers'] as const;

export class SambaUnavailable extends Error {
  override readonly name = 'SambaUnavailable';
}

export interface SambaTimes {
  /** Provisioning (samba-tool, accounts, keytabs); undefined when the cached template was used. */
  provisionMs: number | undefined;
  /** Copy of the template, namespace, `samba -D` until KDC, LDAP, LDAPS and SMB answer. */
  startMs: number;
}

export interface SambaMember {
  /** The member's smb.conf (for ntlm_auth -s / wbinfo). */
  conf: string;
  /** Environment for member-side processes (ntlm_auth, wbinfo): nss_wrapper and the winbindd socket of this run. */
  env: Record<string, string>;
  joinMs: number;
}

export interface SambaDomain {
  dir: string;
  dcIp: string;
  hostIp: string;
  domainSid: string;
  /** krb5.conf for clients (AES), and one that asks for RC4 only. */
  krb5Conf: string;
  krb5Rc4Conf: string;
  /** FILE: keytab of host/idb.samdom.test (AES256, AES128, RC4) and of host/legacy.samdom.test (RC4). */
  keytab: string;
  legacyKeytab: string;
  /** ldaps://<dc ip> and the PEM of the DC's self-signed CA (its certificate names dc1.samdom.test). */
  ldapsUrl: string;
  ldapUrl: string;
  caPem: string;
  times: SambaTimes;
  /** kinit `user` into a fresh ccache (FILE:...); `rc4`: with the RC4-only krb5.conf. Throws with kinit's message. */
  kinit(
    user: string,
    password: string,
    options?: { rc4?: boolean },
  ): Promise<{ ccache: string; env: Record<string, string> }>;
  /** Runs a command with PATH and `env`; resolves with stdout, rejects with stdout+stderr. */
  exec(command: string, args: string[], options?: { env?: Record<string, string>; input?: string }): Promise<string>;
  /** objectSid of the account or group named `sAMAccountName`, read from the DC's database (ldbsearch). */
  sidOf(sAMAccountName: string): Promise<string>;
  /** Joins this host to the domain (net ads join) and starts winbindd for it (once; later calls return the same). */
  join(): Promise<SambaMember>;
  stop(): Promise<void>;
}

/** What is missing to run the Samba suites (empty when all is there). */
export function sambaMissing(): string[] {
  const missing: string[] = [];
  if (process.getuid?.() !== 0) missing.push('root (ip netns, samba)');
  const tools: Array<[string, string]> = [
    ['samba', 'samba'],
    ['samba-tool', 'samba'],
    ['winbindd', 'winbind'],
    ['wbinfo', 'winbind'],
    ['ntlm_auth', 'winbind'],
    ['net', 'samba-common-bin'],
    ['ldbmodify', 'ldb-tools'],
    ['ldbsearch', 'ldb-tools'],
    ['kinit', 'krb5-user'],
    ['ip', 'iproute2'],
  ];
  for (const [tool, pkg] of tools) {
    if (
      spawnSync('sh', ['-c', `command -v ${tool}`], { env: { PATH }, stdio: 'ignore' }).status !== 0 &&
      !missing.includes(pkg)
    )
      missing.push(pkg);
  }
  if (
    !['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib'].some((d) =>
      existsSync(join(d, 'libnss_wrapper.so')),
    )
  )
    missing.push('libnss-wrapper');
  return missing;
}

function exec(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; input?: string; timeout?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      command,
      args,
      { env: { PATH, ...options.env }, timeout: options.timeout ?? 60_000, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        if (error)
          reject(
            Object.assign(new Error(`${command} ${args.join(' ')}: ${error.message}\n${stdout}${stderr}`), {
              stdout,
              stderr,
            }),
          );
        else resolve(stdout);
      },
    );
    // A command that exits without reading its input (klist, kvno) must not turn into an unhandled EPIPE.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}

/**
 * The provisioned template for this version of samba-ad.sh, provisioned now if it is not cached. One suite provisions
 * (a lock folder beside the template); suites starting meanwhile wait for it instead of provisioning too.
 */
async function template(): Promise<{ dir: string; provisionMs: number | undefined }> {
  const hash = createHash('sha256').update(readFileSync(SAMBA_SCRIPT)).digest('hex').slice(0, 16);
  const cache = join(tmpdir(), `samba-ad-${hash}`);
  const dir = join(cache, 'template');
  const ready = (): boolean => existsSync(join(dir, 'domain-sid'));
  if (ready()) return { dir, provisionMs: undefined };
  mkdirSync(cache, { recursive: true });
  const lock = join(cache, 'provisioning.lock');
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (ready()) return { dir, provisionMs: undefined };
      // A lock left by a run that died while provisioning: older than 5 minutes.
      try {
        if (Date.now() - statSync(lock).mtimeMs > 300_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // gone meanwhile
      }
      if (Date.now() > deadline) throw new Error(`waited 5 minutes for ${lock}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  const started = performance.now();
  try {
    if (ready()) return { dir, provisionMs: undefined };
    const work = mkdtempSync(join(cache, 'provisioning-'));
    try {
      // Provision beside, then rename: nobody ever sees half a template.
      await exec('bash', [SAMBA_SCRIPT, 'provision', join(work, 'template')], { timeout: 180_000 });
      renameSync(join(work, 'template'), dir);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
  return { dir, provisionMs: Math.round(performance.now() - started) };
}

/** Starts a Samba AD DC from the cached template (provisioning it first if needed). Throws SambaUnavailable. */
export async function startSambaDomain(): Promise<SambaDomain> {
  const missing = sambaMissing();
  if (missing.length > 0) throw new SambaUnavailable(`missing: ${missing.join(', ')}`);
  let tpl: { dir: string; provisionMs: number | undefined };
  try {
    tpl = await template();
  } catch (error) {
    throw new SambaUnavailable(`samba-tool domain provision failed: ${(error as Error).message}`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'samba-ad-run-'));
  const started = performance.now();
  try {
    await exec('bash', [SAMBA_SCRIPT, 'start', tpl.dir, dir, String(process.pid)], { timeout: 120_000 });
  } catch (error) {
    await exec('bash', [SAMBA_SCRIPT, 'stop', dir]).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw new SambaUnavailable(`samba could not start: ${(error as Error).message}`);
  }
  const startMs = Math.round(performance.now() - started);
  const envFile = (file: string): Record<string, string> =>
    Object.fromEntries(
      readFileSync(file, 'utf8')
        .split('\n')
        .map((line) => /^(?:export )?([A-Z0-9_]+)=(.*)$/.exec(line))
        .filter((m): m is RegExpExecArray => m !== null)
        .map((m) => [m[1]!, m[2]!]),
    );
  const vars = envFile(join(dir, 'env.sh'));
  const dcIp = vars.SAMBA_AD_DC_IP!;
  let member: Promise<SambaMember> | undefined;
  let ccaches = 0;
  let stopped = false;
  const domain: SambaDomain = {
    dir,
    dcIp,
    hostIp: vars.SAMBA_AD_HOST_IP!,
    domainSid: vars.SAMBA_AD_DOMAIN_SID!,
    krb5Conf: join(dir, 'krb5.conf'),
    krb5Rc4Conf: join(dir, 'krb5-rc4.conf'),
    keytab: `FILE:${join(dir, 'idb.keytab')}`,
    legacyKeytab: `FILE:${join(dir, 'legacy.keytab')}`,
    ldapsUrl: `ldaps://${dcIp}`,
    ldapUrl: `ldap://${dcIp}`,
    get caPem() {
      return readFileSync(join(dir, 'dc', 'private', 'tls', 'ca.pem'), 'utf8');
    },
    times: { provisionMs: tpl.provisionMs, startMs },
    async kinit(user, password, options = {}) {
      const ccache = `FILE:${join(dir, `ccache-${++ccaches}`)}`;
      const env = {
        KRB5_CONFIG: options.rc4 ? join(dir, 'krb5-rc4.conf') : join(dir, 'krb5.conf'),
        KRB5CCNAME: ccache,
      };
      await exec('kinit', [user], { env, input: `${password}\n` });
      return { ccache, env };
    },
    exec: (command, args, options = {}) => exec(command, args, options),
    async sidOf(name) {
      if (!/^[A-Za-z0-9 ._$-]+$/.test(name)) throw new Error(`unexpected account name ${name}`);
      const out = await exec('ldbsearch', [
        '-H',
        join(dir, 'dc', 'private', 'sam.ldb'),
        '-b',
        SAMBA_BASE_DN,
        `(sAMAccountName=${name})`,
        'objectSid',
      ]);
      const sid = /^objectSid: (S-[0-9-]+)$/m.exec(out)?.[1];
      if (sid === undefined) throw new Error(`no objectSid for ${name}`);
      return sid;
    },
    join() {
      member ??= (async () => {
        const t0 = performance.now();
        await exec('bash', [SAMBA_SCRIPT, 'join', dir], { timeout: 120_000 });
        const joinMs = Math.round(performance.now() - t0);
        const all = envFile(join(dir, 'env.sh'));
        return { conf: all.SAMBA_AD_MEMBER_CONF!, env: envFile(all.SAMBA_AD_MEMBER_ENV!), joinMs };
      })();
      return member;
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await exec('bash', [SAMBA_SCRIPT, 'stop', dir]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return domain;
}

/**
 * A suite's domain: started, and this host joined as a member when `join` is set. What keeps Samba from running
 * here is returned as the reason to skip (and printed; '' when it runs); a domain that started stays in the answer
 * so the suite can stop it.
 */
export async function startSambaForSuite(
  suite: string,
  options: { join?: boolean } = {},
): Promise<{ domain?: SambaDomain; member?: SambaMember; unavailable: string }> {
  let domain: SambaDomain | undefined;
  try {
    domain = await startSambaDomain();
    return { domain, unavailable: '', ...(options.join ? { member: await domain.join() } : {}) };
  } catch (error) {
    if (!(error instanceof SambaUnavailable) && domain === undefined) throw error;
    // Under REQUIRE_PEERS=1 this throws: the domain that did start is stopped first.
    const reason = error instanceof Error ? error.message : String(error);
    try {
      peerUnavailable(`samba ${suite}`, `Samba AD could not start or join: ${reason}`);
      return { domain, unavailable: reason };
    } catch (required) {
      await domain?.stop();
      throw required;
    }
  }
}

/**
 * A describe block that runs only where Samba AD is installed (PEERS.samba), otherwise one skipped test says what is
 * missing (test/support/peers.ts: a failure under REQUIRE_PEERS=1). Start failures (SambaUnavailable in beforeAll)
 * are the suite's to turn into skips, through startSambaForSuite.
 */
export function describeSamba(name: string, body: () => void): void {
  const missing = needPeers(`samba ${name}`, PEERS.samba);
  if (!missing) describe(`${name} (Samba AD)`, body);
  else describe.skip(`${name} (Samba AD)`, () => it.skip(missing, () => {}));
}
