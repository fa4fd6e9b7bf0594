/**
 * Who may log on with NTLM (BRIDGE_KERBEROS_ONLY, BRIDGE_NTLM_ACCOUNTS): the defence against NTLM relay. A relay
 * (impacket's ntlmrelayx has a wcfrelayserver for NetTcpBinding) forwards a victim's NTLM logon, made to a server the
 * attacker controls, to this bridge; NTLM binds the logon to neither the server nor the channel here, so the bridge
 * cannot tell. Kerberos can: the ticket is for this host's SPN. The policy is applied when a context is established
 * (stream.ts), whichever backend made it: the GSSAPI acceptor may offer NTLM too when gss-ntlmssp is installed.
 */
import { ConfigError } from '#idb';

export type NtlmPolicy =
  /** Every account the backends accept (the default). */
  | { kind: 'any' }
  /** BRIDGE_KERBEROS_ONLY=true: no NTLM logon at all. */
  | { kind: 'none' }
  /** BRIDGE_NTLM_ACCOUNTS: these `DOMAIN\user` accounts and every account of these `DOMAIN`s (upper case). */
  | { kind: 'listed'; accounts: ReadonlySet<string>; domains: ReadonlySet<string> };

export const ANY_NTLM: NtlmPolicy = { kind: 'any' };

/** The policy from BRIDGE_KERBEROS_ONLY (`true`/`false`) and BRIDGE_NTLM_ACCOUNTS (`CORP\svc-legacy, LEGACY`). */
export function readNtlmPolicy(kerberosOnly: string | undefined, accounts: string | undefined): NtlmPolicy {
  if (kerberosOnly !== undefined && kerberosOnly !== '' && kerberosOnly !== 'true' && kerberosOnly !== 'false')
    throw new ConfigError(`BRIDGE_KERBEROS_ONLY must be true or false, not "${kerberosOnly}"`);
  const list = (accounts ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (kerberosOnly === 'true') {
    if (list.length > 0)
      throw new ConfigError(
        'BRIDGE_NTLM_ACCOUNTS allows NTLM for some accounts: unset it with BRIDGE_KERBEROS_ONLY=true',
      );
    return { kind: 'none' };
  }
  if (list.length === 0) return ANY_NTLM;
  const named = new Set<string>();
  const domains = new Set<string>();
  for (const entry of list) {
    const match = /^([A-Za-z0-9][A-Za-z0-9.-]{0,14})(?:\\([^\\\s]+))?$/.exec(entry);
    if (match === null)
      throw new ConfigError(`BRIDGE_NTLM_ACCOUNTS: "${entry}" is neither DOMAIN\\user nor a NetBIOS domain name`);
    if (match[2] === undefined) domains.add(match[1]!.toUpperCase());
    else named.add(`${match[1]!.toUpperCase()}\\${match[2].toUpperCase()}`);
  }
  return { kind: 'listed', accounts: named, domains };
}

/** Whether `peer` (an NTLM logon's `DOMAIN\user`) may log on with NTLM. */
export function ntlmAllowed(policy: NtlmPolicy, peer: string): boolean {
  if (policy.kind !== 'listed') return policy.kind === 'any';
  const name = peer.toUpperCase();
  const slash = name.indexOf('\\');
  return policy.accounts.has(name) || (slash > 0 && policy.domains.has(name.slice(0, slash)));
}
