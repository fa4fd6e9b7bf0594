import { join } from 'node:path';

/**
 * The environment of a bridge kept whole in one folder, as the in-process tests and benches start it: security None,
 * any free port, SQLite and the files in the folder, the roles file `roles.json` there (the caller writes it).
 */
export function bridgeFolderEnv(folder: string): Record<string, string> {
  return {
    BRIDGE_SECURITY: 'none',
    BRIDGE_PORT: '0',
    DATABASE_URL: `file:${join(folder, 'idb.sqlite')}`,
    FILES_URL: `file:${join(folder, 'files')}`,
    BRIDGE_ROLES_FILE: join(folder, 'roles.json'),
  };
}
