/**
 * NTLM pass-through for domain accounts (winbind.ts) against a Samba AD DC: this host joins the domain as member
 * BRIDGEHOST (`net ads join`, winbindd: test/support/negotiate/samba-ad.sh), a real NTLM initiator (gss-ntlmssp through
 * python3-gssapi) logs on as a domain user against a CHALLENGE made here, winbind.ts has the DC check the NTLMv2
 * response (ntlm_auth --helper-protocol=ntlm-server-1) and answers the session base key, with which the MIC of the
 * AUTHENTICATE verifies and the client's first sealed message opens: the key is the one the acceptor needs. The
 * user's groups come from winbind, nested and domain local ones included. Refusals: wrong password, disabled account,
 * expired password, unknown user, a response replayed against another challenge. A helper run as a non-root user is
 * served only in group winbindd_priv (how a bridge that is not root reaches winbindd's privileged pipe).
 *
 * Skipped with a message where Samba cannot start (see samba-ad.ts) or gss-ntlmssp is missing.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { WinbindAuthenticator, WinbindError } from '../../../tcp-bridge/src/negotiate/winbind.ts';
import {
  announcesMic,
  challengeMessage,
  finishAcceptor,
  NtlmInitiator,
  ntlmInSpnego,
  parseAuthenticate,
  spnegoChallenge,
} from '../../support/negotiate/ntlm-passthrough.ts';
import {
  describeSamba,
  SAMBA_DNS_IDENTITY,
  SAMBA_USERS,
  startSambaForSuite,
  type SambaDomain,
  type SambaMember,
} from '../../support/negotiate/samba-ad.ts';
import { needPeers, PEERS } from '../../support/peers.ts';

const noInitiators = needPeers('samba NTLM pass-through', PEERS.gssInitiators);
/** A non-root helper (setpriv as nobody) and the group Debian's winbind package creates for winbindd's privileged pipe. */
const privileged =
  spawnSync('sh', ['-c', 'command -v setpriv && getent group winbindd_priv && getent passwd nobody'], {
    stdio: 'ignore',
  }).status === 0;

describeSamba('NTLM pass-through for domain accounts (winbind.ts, ntlm_auth, winbindd)', () => {
  let domain: SambaDomain | undefined;
  let member: SambaMember | undefined;
  let winbind: WinbindAuthenticator | undefined;
  let unavailable = '';
  let scratch = '';
  const sids = new Map<string, string>();

  const need = (ctx: TestContext): WinbindAuthenticator => {
    if (!winbind) ctx.skip(`Samba AD could not start or join: ${unavailable}`);
    return winbind!;
  };

  /**
   * One NTLM logon of gss-ntlmssp as `account` (`DOMAIN:user:password`), its response checked by winbind. Under SPNEGO
   * by default (then the client sends a MIC); `raw`: NTLM alone, no MIC, and the client's first sealed message.
   */
  async function logon(
    account: string,
    options: {
      tamper?: (nt: Uint8Array) => Uint8Array;
      challenge?: Uint8Array;
      computer?: string;
      raw?: boolean;
      via?: WinbindAuthenticator;
    } = {},
  ) {
    const message = `sealed for ${account.split(':')[1]}`;
    const mode = options.raw ? 'raw' : 'spnego';
    const initiator = new NtlmInitiator(scratch, account, `host@${SAMBA_DNS_IDENTITY}`, message, mode);
    try {
      const first = await initiator.next();
      const negotiate = mode === 'spnego' ? ntlmInSpnego(first) : first;
      // NbComputerName: the member's NetBIOS name (the DC checks it against the secure channel); the DNS computer
      // name stays the bridge's identity.
      const challenge = challengeMessage('SAMDOM', options.computer ?? 'BRIDGEHOST', 'samdom.test', SAMBA_DNS_IDENTITY);
      initiator.send(mode === 'spnego' ? spnegoChallenge(challenge.message) : challenge.message);
      const second = await initiator.next();
      const authenticate = mode === 'spnego' ? ntlmInSpnego(second) : second;
      const auth = parseAuthenticate(authenticate);
      const ntResponse = options.tamper ? options.tamper(auth.ntResponse) : auth.ntResponse;
      const result = await (options.via ?? winbind!).authenticate({
        user: auth.user,
        domain: auth.domain,
        serverChallenge: options.challenge ?? challenge.serverChallenge,
        ntResponse,
      });
      const sealed = mode === 'raw' ? await initiator.next() : undefined;
      return {
        auth,
        result,
        message,
        micAnnounced: announcesMic(auth.ntResponse),
        ...finishAcceptor(result.sessionBaseKey, negotiate, challenge.message, authenticate, sealed),
      };
    } finally {
      initiator.close();
    }
  }

  const refusal = async (account: string, options: Parameters<typeof logon>[1] = {}): Promise<WinbindError> => {
    try {
      await logon(account, options);
    } catch (error) {
      if (error instanceof WinbindError) return error;
      throw error;
    }
    throw new Error(`${account} was accepted`);
  };

  beforeAll(async () => {
    if (noInitiators) {
      unavailable = noInitiators;
      return;
    }
    ({ domain, member, unavailable } = await startSambaForSuite('NTLM pass-through suite', { join: true }));
    if (unavailable || domain === undefined || member === undefined) return;
    console.info(`[samba] member BRIDGEHOST joined and winbindd up in ${member.joinMs} ms`);
    scratch = mkdtempSync(join(tmpdir(), 'ntlm-passthrough-'));
    winbind = new WinbindAuthenticator({ domain: 'SAMDOM', config: member.conf, env: member.env });
    for (const name of ['alice', 'bob', 'idb-team', 'idb-readers', 'idb-all', 'idb-writers', 'Domain Users'])
      sids.set(name, await domain.sidOf(name));
  }, 240_000);

  afterAll(async () => {
    winbind?.close();
    await domain?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("alice logs on (SPNEGO): the DC's session base key verifies the client's MIC; her groups, nested", async (ctx) => {
    need(ctx);
    const { auth, result, micAnnounced, micMatches } = await logon(`SAMDOM:alice:${SAMBA_USERS.alice.password}`);
    expect({ user: auth.user, domain: auth.domain, lmZero: auth.lmResponse.every((b) => b === 0) }).toEqual({
      user: 'alice',
      domain: 'SAMDOM',
      lmZero: true,
    });
    expect(auth.ntResponse.length).toBeGreaterThan(48);
    expect(result.sessionBaseKey).toHaveLength(16);
    expect(micAnnounced).toBe(true);
    expect(micMatches).toBe(true);
    expect(result).toMatchObject({ account: 'SAMDOM\\alice', userSid: sids.get('alice') });
    expect(result.groupSids).toEqual(
      expect.arrayContaining([
        sids.get('Domain Users'),
        sids.get('idb-team'),
        sids.get('idb-readers'),
        sids.get('idb-all'),
      ]),
    );
    expect(result.groupSids).not.toContain(sids.get('idb-writers'));
    expect(result.groupSids).not.toContain(sids.get('alice'));
  });

  it('raw NTLM: the keys derived from the session base key open the sealed message the client sent', async (ctx) => {
    need(ctx);
    const { plaintext, message, micAnnounced } = await logon(`SAMDOM:alice:${SAMBA_USERS.alice.password}`, {
      raw: true,
    });
    expect(micAnnounced).toBe(false); // gss-ntlmssp adds a MIC only under SPNEGO
    expect(Buffer.from(plaintext!).toString()).toBe(message);
  });

  it("the DC refuses a response whose MsvAvNbComputerName is not the member's NetBIOS name", async (ctx) => {
    need(ctx);
    expect((await refusal(`SAMDOM:alice:${SAMBA_USERS.alice.password}`, { computer: 'IDB' })).reason).toBe(
      'winbind.refused',
    );
  });

  it('bob: the domain local group idb-writers; the domain typed in lower case is the same account', async (ctx) => {
    need(ctx);
    const { result, micMatches } = await logon(`samdom:bob:${SAMBA_USERS.bob.password}`);
    expect(micMatches).toBe(true);
    expect(result.account).toBe('SAMDOM\\bob');
    expect(result.groupSids).toContain(sids.get('idb-writers'));
  });

  it('refuses a wrong password, a disabled account, an expired password, an unknown user', async (ctx) => {
    need(ctx);
    const errors = {
      wrong: await refusal('SAMDOM:alice:Not-Her-Password1'),
      disabled: await refusal(`SAMDOM:carol:${SAMBA_USERS.carol.password}`),
      expired: await refusal(`SAMDOM:dave:${SAMBA_USERS.dave.password}`),
      unknown: await refusal('SAMDOM:nobody:Whatever-Pass1'),
    };
    console.info(
      `[samba] winbind refusals: ${JSON.stringify(Object.fromEntries(Object.entries(errors).map(([k, e]) => [k, e.detail])))}`,
    );
    const reasons = Object.fromEntries(Object.entries(errors).map(([k, e]) => [k, e.reason]));
    expect(reasons).toEqual({
      wrong: 'winbind.wrong-password',
      disabled: 'winbind.disabled',
      expired: 'winbind.password-expired',
      unknown: 'winbind.no-such-user',
    });
    // After the refusals the helper still serves.
    const { micMatches } = await logon(`SAMDOM:alice:${SAMBA_USERS.alice.password}`);
    expect(micMatches).toBe(true);
  });

  it('refuses a response checked against another challenge, and a tampered NTProofStr', async (ctx) => {
    need(ctx);
    expect(
      (await refusal(`SAMDOM:alice:${SAMBA_USERS.alice.password}`, { challenge: new Uint8Array(8).fill(7) })).reason,
    ).toBe('winbind.wrong-password');
    const flip = (nt: Uint8Array): Uint8Array => {
      const copy = nt.slice();
      copy[3]! ^= 1;
      return copy;
    };
    expect((await refusal(`SAMDOM:alice:${SAMBA_USERS.alice.password}`, { tamper: flip })).reason).toBe(
      'winbind.wrong-password',
    );
  });

  it('validates a request before asking: challenge length, NTLMv1-sized responses, names with line breaks', async (ctx) => {
    const w = need(ctx);
    const base = {
      user: 'alice',
      domain: 'SAMDOM',
      serverChallenge: new Uint8Array(8),
      ntResponse: new Uint8Array(64),
    };
    await expect(w.authenticate({ ...base, serverChallenge: new Uint8Array(7) })).rejects.toThrow(/8 bytes/);
    await expect(w.authenticate({ ...base, ntResponse: new Uint8Array(24) })).rejects.toThrow(/no NTLMv2 response/);
    await expect(w.authenticate({ ...base, user: 'alice\nNT-Domain: X' })).rejects.toThrow(/malformed/);
    await expect(w.authenticate({ ...base, user: '' })).rejects.toThrow(/malformed/);
  });

  it("memberNames(): the member's NetBIOS computer and domain names, which the CHALLENGE must carry", async (ctx) => {
    const w = need(ctx);
    expect(await w.memberNames()).toEqual({ computer: 'BRIDGEHOST', domain: 'SAMDOM' });
    await expect(
      new WinbindAuthenticator({ domain: 'OTHER', config: member!.conf, env: member!.env }).memberNames(),
    ).rejects.toThrow(/workgroup is SAMDOM, not OTHER/);
  });

  it.skipIf(!privileged)(
    'a non-root bridge user is served in group winbindd_priv; outside it, refused as winbind.unavailable',
    async (ctx) => {
      need(ctx);
      // Debian's winbind package gives /var/lib/samba/winbindd_privileged to group winbindd_priv; the member of
      // samba-ad.sh has its own under its state directory: the same here. nobody must reach the member's smb.conf.
      chmodSync(domain!.dir, 0o755);
      chmodSync(scratch, 0o755);
      execFileSync('chgrp', ['winbindd_priv', join(dirname(member!.conf), 'state', 'winbindd_privileged')]);
      const as = (groups: string): WinbindAuthenticator => {
        const helper = join(scratch, `ntlm_auth-as-nobody${groups === '' ? '' : `-${groups}`}`);
        const keep = groups === '' ? '--clear-groups' : `--groups=${groups}`;
        writeFileSync(helper, `#!/bin/sh\nexec setpriv --reuid=nobody --regid=nogroup ${keep} ntlm_auth "$@"\n`, {
          mode: 0o755,
        });
        return new WinbindAuthenticator({ domain: 'SAMDOM', config: member!.conf, env: member!.env, ntlmAuth: helper });
      };
      const inGroup = as('winbindd_priv');
      const outside = as('');
      try {
        const { result, micMatches } = await logon(`SAMDOM:alice:${SAMBA_USERS.alice.password}`, { via: inGroup });
        expect({ account: result.account, micMatches }).toEqual({ account: 'SAMDOM\\alice', micMatches: true });
        const error = await refusal(`SAMDOM:alice:${SAMBA_USERS.alice.password}`, { via: outside });
        expect({ reason: error.reason, detail: error.detail }).toEqual({
          reason: 'winbind.unavailable',
          detail: 'Reading winbind reply failed!',
        });
      } finally {
        inGroup.close();
        outside.close();
      }
    },
  );

  describe('configuration', () => {
    it('refuses a domain name that is no NetBIOS name', () => {
      expect(() => new WinbindAuthenticator({ domain: 'not a domain' })).toThrow(WinbindError);
    });
  });
});
