import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../net.ts';

const run = promisify(execFile);

/** Runs a command with its output to nowhere: `pg_ctl start` leaves the server holding its stdio, so waiting for
 * captured output to end would wait for the server. Resolves on exit 0. */
function runDetached(file: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`${file} ${args.join(' ')} failed (${signal ?? code})`)),
    );
  });
}

export interface RunningPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, no password). */
  url: string;
  /** Fast shutdown, then the cluster's folder is removed. */
  stop(): Promise<void>;
}

/** Where Debian (and the PGBIN variable) keep initdb and pg_ctl; the newest installed major version wins. */
function binaries(): string | undefined {
  const candidates = [process.env.PGBIN, ...['17', '16', '15', '14', '13'].map((v) => `/usr/lib/postgresql/${v}/bin`)];
  return candidates.find((dir) => dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}

/** What is missing to start a cluster (empty when all is there): the peer of test/support/peers.ts. */
export function postgresMissing(): string[] {
  return binaries() === undefined ? ['postgresql (initdb, pg_ctl under /usr/lib/postgresql/*/bin or $PGBIN)'] : [];
}

function findBinaries(): string {
  const dir = binaries();
  if (dir !== undefined) return dir;
  throw new Error(
    'PostgreSQL server binaries (initdb, pg_ctl) not found under /usr/lib/postgresql/*/bin or $PGBIN: install them with `apt-get install -y postgresql` (.ci/run does so).',
  );
}

/**
 * A throwaway PostgreSQL cluster in a fresh temp folder on a free loopback port (socket in /tmp). initdb and pg_ctl
 * refuse to run as root, so as root they run as the `postgres` user (which owns the folder).
 */
export async function startPostgres(): Promise<RunningPostgres> {
  const bin = findBinaries();
  const root = process.getuid?.() === 0;
  const base = await mkdtemp(join(tmpdir(), 'pg-test-'));
  const data = join(base, 'data');
  const log = join(base, 'server.log');
  const as = async (command: string, args: string[]): Promise<void> => {
    const file = join(bin, command);
    await (root ? runDetached('runuser', ['-u', 'postgres', '--', file, ...args]) : runDetached(file, args));
  };
  try {
    if (root) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      await chown(base, Number(stdout.trim()), Number(gid.trim()));
    }
    await as('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
    const port = await freePort();
    await as('pg_ctl', [
      '-D',
      data,
      '-l',
      log,
      '-w',
      '-t',
      '30',
      '-o',
      `-p ${port} -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off`,
      'start',
    ]);
    return {
      url: `postgres://postgres@127.0.0.1:${port}/postgres`,
      async stop() {
        try {
          await as('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']);
        } finally {
          await rm(base, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
    await rm(base, { recursive: true, force: true });
    throw error;
  }
}
