#!/usr/bin/env node
// The `swiss-doc` command (README, "Command line"): src/runtime/node/cli.ts.
//
// In a clone with its dev dependencies (what `npm ci` gives) it runs the TypeScript source through tsx: it works
// before anything is built and is never older than the checkout, whereas a bundle left in dist/ by an earlier build
// goes stale on the next pull. Where tsx or src/ is absent (an install without dev dependencies, a deployment that
// ships dist/), or tsx cannot hook this Node (module.register needs 20.6), it runs the bundle that
// `npm run build:node` writes to dist/node/cli.mjs.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = new URL('../src/runtime/node/cli.ts', import.meta.url);
const bundle = new URL('../dist/node/cli.mjs', import.meta.url);

async function registerTsx() {
  if (!existsSync(source)) return false;
  let api;
  try {
    api = await import('tsx/esm/api');
  } catch (e) {
    if (e?.code === 'ERR_MODULE_NOT_FOUND') return false;
    throw e;
  }
  try {
    // The repository's tsconfig, not one found in the directory the command runs in.
    api.register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
    return true;
  } catch (e) {
    if (existsSync(bundle)) return false;
    throw e;
  }
}

if (await registerTsx()) await import(source.href);
else if (existsSync(bundle)) await import(bundle.href);
else {
  process.stderr.write(
    'swiss-doc: needs tsx (a dev dependency: npm ci) or the bundle dist/node/cli.mjs (npm run build:node).\n',
  );
  process.exitCode = 2;
}
