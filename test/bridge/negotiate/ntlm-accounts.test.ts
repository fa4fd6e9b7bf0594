/** Who may log on over NTLM: the users file (BRIDGE_NTLM_USERS, ntlm/accounts.ts) and the logon throttle (ntlm/throttle.ts). */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config.ts';
import { addressKey, LogonThrottle, NtlmAccounts, ntHash } from '../../../tcp-bridge/src/negotiate/ntlm/index.ts';
import { toHex } from '../../support/negotiate/negotiate.ts';

describe('the users file (BRIDGE_NTLM_USERS)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ntlm-users-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string, mode: number): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    chmodSync(path, mode);
    return path;
  };

  it('reads passwords and {NT} hashes, skips comments and blank lines, keeps colons in passwords', () => {
    const accounts = NtlmAccounts.load(
      file(
        'ok',
        `# accounts\n\nTESTDOM:alice:Secret1!\nTESTDOM:bob:{NT}${toHex(ntHash('Hunter2'))}\n:carol:a:b:c\r\n`,
        0o600,
      ),
    );
    expect(accounts.size).toBe(3);
    expect(accounts.find('bob', 'testdom')!.ntHash).toEqual(ntHash('Hunter2'));
    expect(accounts.find('carol', '')!.ntHash).toEqual(ntHash('a:b:c'));
  });

  it('matches users case-insensitively and domains as gss-ntlmssp does', () => {
    const accounts = NtlmAccounts.parse('ONE:alice:first\nTWO:alice:second\n:dave:third\n');
    expect(accounts.find('ALICE', 'two')!.ntHash).toEqual(ntHash('second'));
    expect(accounts.find('alice', '')!.ntHash).toEqual(ntHash('first')); // no domain: the first line of that user
    expect(accounts.find('alice', 'THREE')).toBeUndefined();
    expect(accounts.find('dave', 'ANY')).toBeUndefined(); // a line without domain serves clients without domain
    expect(accounts.find('dave', '')!.ntHash).toEqual(ntHash('third'));
  });

  it('refuses a file that group or others may access, a missing file and malformed lines', () => {
    for (const mode of [0o644, 0o640, 0o604, 0o620, 0o610, 0o601]) {
      expect(() => NtlmAccounts.load(file(`mode${mode.toString(8)}`, 'D:u:p\n', mode))).toThrow(ConfigError);
    }
    expect(() => NtlmAccounts.load(file('mode400', 'D:u:p\n', 0o400))).not.toThrow();
    expect(() => NtlmAccounts.load(join(dir, 'missing'))).toThrow(/cannot read/);
    expect(() => NtlmAccounts.parse('D:user-without-password\n')).toThrow(/DOMAIN:user:password/);
    expect(() => NtlmAccounts.parse('D::p\n')).toThrow(/empty user/);
    expect(() => NtlmAccounts.parse('D:u:\n')).toThrow(/empty password/);
    expect(() => NtlmAccounts.parse('D:u:{NT}1234\n')).toThrow(/32 hex digits/);
  });
});

describe('the logon throttle', () => {
  it('blocks a user after its failures, until the window ends; a success clears the user', () => {
    let now = 0;
    const throttle = new LogonThrottle({ perUser: 3, perAddress: 100, windowMs: 1000, now: () => now });
    for (let i = 0; i < 3; i++) throttle.failed('D\\alice', '192.0.2.1');
    expect(throttle.blocked('d\\ALICE', '192.0.2.9')).toBe(true);
    expect(throttle.blocked('D\\bob', '192.0.2.1')).toBe(false);
    now = 1000;
    expect(throttle.blocked('D\\alice', '192.0.2.1')).toBe(false);
    throttle.failed('D\\alice', '192.0.2.1');
    throttle.succeeded('D\\alice');
    throttle.failed('D\\alice', '192.0.2.1');
    throttle.failed('D\\alice', '192.0.2.1');
    expect(throttle.blocked('D\\alice', '192.0.2.1')).toBe(false);
  });

  it('blocks an address (IPv6 by /64) whatever the user, and stays bounded', () => {
    const throttle = new LogonThrottle({ perUser: 100, perAddress: 4, maxEntries: 50 });
    for (let i = 0; i < 4; i++) throttle.failed(`D\\user${i}`, '2001:db8:1:2::10');
    expect(throttle.blocked('D\\someone', '2001:db8:1:2:ffff::1')).toBe(true);
    expect(throttle.blocked('D\\someone', '2001:db8:1:3::10')).toBe(false);
    for (let i = 0; i < 4; i++) throttle.failed(undefined, '::ffff:192.0.2.7');
    expect(throttle.blocked(undefined, '192.0.2.7')).toBe(true);
    for (let i = 0; i < 500; i++) throttle.failed(`D\\spray${i}`, `198.51.100.${i % 200}`);
    expect(throttle.size).toBeLessThanOrEqual(50);
    expect(addressKey('2001:DB8:0:0:1::1')).toBe('a:2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('a:0:0:0:0::/64');
  });
});
