import { ConfigError } from '../config.ts';

/**
 * API keys as the service holds them: a name and the SHA-256 of the key, never the key itself (docs/contract/http.md,
 * "Running in production"). The list is `name:sha256hex` lines, `#` starting a comment; the runtime reads it (a file on
 * Node, Bun and Deno, a secret binding on Workers) and this module parses and checks it.
 */
export interface ApiKey {
  name: string;
  sha256: Uint8Array;
}

const LINE = /^([^:\s#][^:#]*?)\s*:\s*([0-9a-fA-F]{64})$/;

/** Parses the key list; a line that is not `name:sha256hex` stops the service, naming the source and line number. */
export function parseApiKeys(text: string, source: string): ApiKey[] {
  const keys: ApiKey[] = [];
  const seen = new Set<string>();
  text.split(/\r?\n|\r/).forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') return;
    const match = LINE.exec(line);
    if (!match)
      throw new ConfigError(
        `${source} line ${i + 1}: expected name:sha256hex (64 hex digits, the SHA-256 of the key, never the key itself)`,
      );
    const hex = match[2]!.toLowerCase();
    if (seen.has(hex)) throw new ConfigError(`${source} line ${i + 1}: the same key hash is listed twice`);
    seen.add(hex);
    keys.push({ name: match[1]!, sha256: Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16)) });
  });
  if (keys.length === 0) throw new ConfigError(`${source} holds no key (lines name:sha256hex)`);
  return keys;
}

/**
 * The name of the key `presented` is, or undefined. Its SHA-256 is compared with every listed hash in full, without
 * stopping at the first difference or the first match, so neither the time taken nor its variation tells how much of
 * a guess was right.
 */
export async function identifyApiKey(keys: readonly ApiKey[], presented: string): Promise<string | undefined> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(presented)));
  let found: string | undefined;
  for (const key of keys) {
    let difference = 0;
    for (let i = 0; i < 32; i++) difference |= key.sha256[i]! ^ digest[i]!;
    if (difference === 0 && found === undefined) found = key.name;
  }
  return found;
}
