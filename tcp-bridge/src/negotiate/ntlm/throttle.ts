/** Throttling of failed NTLM logons, for both NTLM acceptors: acceptor.ts and the gss-ntlmssp gate of ../gssapi/ntlm.ts. */

import { NegotiateError } from '../security-context.ts';
import { upperInvariant } from './crypto.ts';

export interface ThrottleOptions {
  /** Failed logons per claimed user within a window before that user is refused until the window ends. Default 5. */
  perUser?: number;
  /** Failed logons per source address (IPv6: per /64) within a window. Default 20. */
  perAddress?: number;
  windowMs?: number;
  /** Most keys remembered; the least recently failed are forgotten first. Default 10 000. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * Counts failed logons per claimed user and per source address in fixed windows, in memory and bounded. Refusing a
 * throttled attempt happens before any password is checked, with the same error as a wrong password. A success clears
 * its user's count (not its address's: one valid account must not let an address keep guessing others).
 */
export class LogonThrottle {
  private readonly entries = new Map<string, { count: number; resetAt: number }>();
  private readonly perUser: number;
  private readonly perAddress: number;
  private readonly windowMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: ThrottleOptions = {}) {
    this.perUser = options.perUser ?? 5;
    this.perAddress = options.perAddress ?? 20;
    this.windowMs = options.windowMs ?? 5 * 60_000;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  blocked(user: string | undefined, address: string): boolean {
    return (
      this.over(addressKey(address), this.perAddress) || (user !== undefined && this.over(userKey(user), this.perUser))
    );
  }

  failed(user: string | undefined, address: string): void {
    this.bump(addressKey(address));
    if (user !== undefined) this.bump(userKey(user));
  }

  /** Throws NegotiateError (`ntlm.throttled`) when `user` or `address` is throttled; the client sees the usual error. */
  refuseBlocked(user: string, address: string): void {
    if (this.blocked(user, address)) throw new NegotiateError('ntlm.throttled', `${user} from ${address}`);
  }

  succeeded(user: string): void {
    this.entries.delete(userKey(user));
  }

  private over(key: string, limit: number): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && entry.count >= limit && this.now() < entry.resetAt;
  }

  private bump(key: string): void {
    const now = this.now();
    const entry = this.entries.get(key);
    const fresh = entry === undefined || now >= entry.resetAt ? { count: 0, resetAt: now + this.windowMs } : entry;
    fresh.count++;
    this.entries.delete(key);
    this.entries.set(key, fresh);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}

const userKey = (user: string): string => `u:${upperInvariant(user)}`;

/** IPv4 as is (also when mapped into IPv6), IPv6 by its /64: one host usually owns a whole /64. */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return `a:${mapped[1]}`;
  if (!address.includes(':')) return `a:${address}`;
  const [head = '', tail = ''] = address.split('%')[0]!.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::')
    ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `a:${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}
