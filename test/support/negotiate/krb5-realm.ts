/**
 * A throwaway MIT Kerberos realm for the Kerberos tests, made by ../shared/tools/krb5-test-realm.sh (reached through
 * support/corpus.ts): realm TEST.LOCAL with its KDC on 127.0.0.1, user alice (password UserPass1) with a ticket in the
 * realm's ccache, and a keytab (0600) for host/localhost and HOST/bridge.test.local. Everything lives in a temp folder;
 * nothing under /etc changes.
 *
 * Needs the Debian packages krb5-kdc (krb5kdc, kdb5_util), krb5-admin-server (kadmin.local) and krb5-user (kinit,
 * ktutil), and python3-gssapi for the initiator.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sharedExists, sharedPath } from '../corpus.ts';

const run = promisify(execFile);
const PATH = `/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin${process.env.PATH ? `:${process.env.PATH}` : ''}`;
export const REALM_SCRIPT = ['tools', 'krb5-test-realm.sh'] as const;

export interface TestRealm {
  dir: string;
  /** KRB5_CONFIG and KRB5CCNAME (alice's ticket) for an initiator. */
  clientEnv: Record<string, string>;
  /** FILE:<dir>/service.keytab */
  keytab: string;
  /** Runs a command with the realm's environment (ktutil, kadmin.local, kinit). */
  exec(command: string, args: string[], input?: string): Promise<string>;
  stop(): Promise<void>;
}

/** What is missing to run the Kerberos tests (empty when all is there). */
export function krb5Missing(): string[] {
  const missing: string[] = [];
  const tools: Array<[string, string]> = [
    ['krb5kdc', 'krb5-kdc'],
    ['kdb5_util', 'krb5-kdc'],
    ['kadmin.local', 'krb5-admin-server'],
    ['kinit', 'krb5-user'],
    ['ktutil', 'krb5-user'],
  ];
  for (const [tool, pkg] of tools) {
    if (
      spawnSync('sh', ['-c', `command -v ${tool}`], { env: { PATH }, stdio: 'ignore' }).status !== 0 &&
      !missing.includes(pkg)
    )
      missing.push(pkg);
  }
  if (
    !existsSync('/usr/bin/python3') ||
    spawnSync('/usr/bin/python3', ['-c', 'import gssapi'], { stdio: 'ignore' }).status !== 0
  )
    missing.push('python3-gssapi');
  if (
    !['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib'].some((d) =>
      existsSync(join(d, 'libgssapi_krb5.so.2')),
    )
  )
    missing.push('libgssapi-krb5-2');
  if (!sharedExists(...REALM_SCRIPT)) missing.push(sharedPath(...REALM_SCRIPT));
  return missing;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startTestRealm(): Promise<TestRealm> {
  const dir = mkdtempSync(join(tmpdir(), 'krb5-realm-'));
  const port = await freePort();
  const env = {
    PATH,
    KRB5_CONFIG: join(dir, 'krb5.conf'),
    KRB5_KDC_PROFILE: join(dir, 'kdc.conf'),
    KRB5CCNAME: `FILE:${join(dir, 'ccache')}`,
  };
  try {
    await run('bash', [sharedPath(...REALM_SCRIPT), dir, String(port)], { env: { PATH }, timeout: 60_000 });
  } catch (error) {
    const log = existsSync(join(dir, 'kdc.log')) ? readFileSync(join(dir, 'kdc.log'), 'utf8') : '';
    stopKdc(dir);
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`krb5-test-realm.sh failed: ${error instanceof Error ? error.message : String(error)}\n${log}`);
  }
  return {
    dir,
    clientEnv: { KRB5_CONFIG: env.KRB5_CONFIG, KRB5CCNAME: env.KRB5CCNAME },
    keytab: `FILE:${join(dir, 'service.keytab')}`,
    exec: async (command, args, input) => {
      const child = execFile(command, args, { env, timeout: 30_000 });
      child.stdin?.end(input ?? '');
      let out = '';
      child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
      let err = '';
      child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}: ${out}${err}`);
      return out;
    },
    stop: async () => {
      stopKdc(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function stopKdc(dir: string): void {
  const pidFile = join(dir, 'kdc.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (Number.isInteger(pid) && pid > 1) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}
