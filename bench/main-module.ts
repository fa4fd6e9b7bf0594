import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Whether the module of `meta` is the one `node`/`tsx` was started with (a bench part run alone), not an import. */
export function isMainModule(meta: ImportMeta): boolean {
  return process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(meta.url);
}
