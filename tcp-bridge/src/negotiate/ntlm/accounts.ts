/**
 * The local NTLM accounts: the BRIDGE_NTLM_USERS file (docs/contract/operations.md), read once at start, for both NTLM
 * acceptors.
 *
 * Format: lines `DOMAIN:user:password`, or `DOMAIN:user:{NT}` + 32 hex digits (the NT hash); `#` starts a comment
 * line; everything after the second colon is the password. The file is a secret file (../secret-file.ts): refused at
 * start when missing, unreadable, or accessible to group or others, and so is a malformed line.
 *
 * Matching follows gss-ntlmssp (its NTLM_USER_FILE): user names compare case-insensitively; a client that sends a
 * domain only matches lines with that domain (case-insensitive), a client that sends no domain matches the first line
 * with its user name. The identity is the line's `DOMAIN\user` (the NetBIOS computer name for a line with an empty
 * domain, as Windows names local accounts). Which NTOWFv2 keys a proof may be computed with is acceptor.ts's.
 */

import { readFileSync } from 'node:fs';
import { ConfigError } from '#idb';
import { checkSecretFile } from '../secret-file.ts';
import { normalizePeerName } from '../security-context.ts';
import { ntHash, upperInvariant } from './crypto.ts';

export interface NtlmAccount {
  domain: string;
  user: string;
  ntHash: Uint8Array;
}

/** One account line of a users file, split at its first two colons. */
export interface UsersFileLine {
  /** 1-based. */
  number: number;
  text: string;
  domain: string;
  user: string;
  /** The password, or `{NT}` and the hash. */
  secret: string;
}

export class NtlmAccounts {
  private constructor(private readonly accounts: readonly NtlmAccount[]) {}

  get size(): number {
    return this.accounts.length;
  }

  /**
   * Reads BRIDGE_NTLM_USERS. Throws ConfigError when the file is missing or unreadable, is accessible to group or
   * others, or has a line that is not `DOMAIN:user:password` / `DOMAIN:user:{NT}<32 hex>`; then, when given,
   * `checkLine` may refuse lines a particular acceptor reads otherwise (it throws ConfigError).
   */
  static load(path: string, checkLine?: (line: UsersFileLine) => void): NtlmAccounts {
    checkSecretFile(path, 'BRIDGE_NTLM_USERS', 'password equivalents');
    const text = readFileSync(path, 'utf8');
    const accounts = NtlmAccounts.parse(text, path);
    if (checkLine) for (const line of usersFileLines(text, path)) checkLine(line);
    return accounts;
  }

  static parse(text: string, source = 'BRIDGE_NTLM_USERS'): NtlmAccounts {
    const accounts: NtlmAccount[] = [];
    for (const { number, domain, user, secret } of usersFileLines(text, source)) {
      const where = `${source} line ${number}`;
      if (user === '') throw new ConfigError(`${where}: empty user name`);
      if (secret === '') throw new ConfigError(`${where}: empty password`);
      let hash: Uint8Array;
      if (secret.startsWith('{NT}')) {
        if (!/^\{NT\}[0-9a-fA-F]{32}$/.test(secret))
          throw new ConfigError(`${where}: {NT} must be followed by 32 hex digits`);
        hash = Uint8Array.from(Buffer.from(secret.slice(4), 'hex'));
      } else {
        hash = ntHash(secret);
      }
      accounts.push({ domain, user, ntHash: hash });
    }
    return new NtlmAccounts(accounts);
  }

  /** The first line for `user` (case-insensitive) whose domain matches `domain` (any line when `domain` is empty). */
  find(user: string, domain: string): NtlmAccount | undefined {
    const wantedUser = upperInvariant(user);
    const wantedDomain = upperInvariant(domain);
    return this.accounts.find(
      (a) => upperInvariant(a.user) === wantedUser && (domain === '' || upperInvariant(a.domain) === wantedDomain),
    );
  }
}

/**
 * The account lines of a users file, one at a time (blank and `#` lines skipped); ConfigError for a line without two
 * colons.
 */
function* usersFileLines(text: string, source: string): Generator<UsersFileLine> {
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const first = line.indexOf(':');
    const second = first < 0 ? -1 : line.indexOf(':', first + 1);
    if (second < 0) throw new ConfigError(`${source} line ${index + 1}: expected DOMAIN:user:password`);
    yield {
      number: index + 1,
      text: line,
      domain: line.slice(0, first),
      user: line.slice(first + 1, second),
      secret: line.slice(second + 1),
    };
  }
}

/** The identity an account logs on as: `DOMAIN\user`, normalized, with `computerName` (NetBIOS) for an empty domain. */
export function accountIdentity(account: NtlmAccount, computerName: string): string {
  return normalizePeerName(`${account.domain === '' ? computerName : account.domain}\\${account.user}`);
}
