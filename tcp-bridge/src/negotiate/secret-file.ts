/**
 * The one check of the files that hold secrets, read at start: BRIDGE_NTLM_USERS (password equivalents: to NTLM an
 * NT hash is as good as the password) and the keytab of KRB5_KTNAME (the service's keys). Such a file must be a
 * regular file the bridge can read, and nobody but its owner may read, write or execute it (mode & 0o077 == 0,
 * `chmod 600`); else the bridge refuses to start.
 */

import { accessSync, constants, statSync } from 'node:fs';
import { ConfigError } from '#idb';

/** Throws ConfigError, naming `setting` and what the file `holds`, unless `path` is a readable owner-only file. */
export function checkSecretFile(path: string, setting: string, holds: string): void {
  let mode: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw Object.assign(new Error('not a file'), { code: 'ENOTFILE' });
    mode = stat.mode;
    accessSync(path, constants.R_OK);
  } catch (error) {
    throw new ConfigError(
      `${setting}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    );
  }
  if ((mode & 0o077) !== 0) {
    throw new ConfigError(
      `${setting}: ${path} has mode ${(mode & 0o777).toString(8).padStart(3, '0')}; it holds ${holds} and must be accessible to its owner only (chmod 600)`,
    );
  }
}
