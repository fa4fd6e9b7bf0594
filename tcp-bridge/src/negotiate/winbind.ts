/**
 * NTLM pass-through for domain accounts: the domain controller checks an NTLMv2 response through Samba's winbind on
 * the bridge's host (joined to the domain with `net ads join`, winbindd running), and answers the session base key
 * the TypeScript acceptor needs for the rest (ExportedSessionKey, the MIC, signing and sealing keys). The user's
 * groups come from winbind too. Nothing else of NTLM moves out of the bridge: the CHALLENGE, the message checks
 * (flags, MIC required, timestamp, target name, LM response all zero), throttling and sealing stay where they are.
 *
 * How ntlm/acceptor.ts uses it (../server.ts makes it once, at start, from BRIDGE_NTLM_DOMAIN: openDomainNtlm):
 *
 *   const domain = new WinbindAuthenticator({ domain: 'CORP' });       // BRIDGE_NTLM_DOMAIN
 *   // in the NTLM acceptor, for an AUTHENTICATE whose domain is not a local account's, after its checks:
 *   const logon = await domain.authenticate({ user, domain: userDomain, serverChallenge, ntResponse });
 *   // logon.sessionBaseKey is NTLMv2's SessionBaseKey = KeyExchangeKey; then, as for a local account:
 *   // exported = RC4(sessionBaseKey, EncryptedRandomSessionKey), check the MIC, derive the session keys.
 *   ... on shutdown: domain.close();
 *
 * What the acceptor hands over, from its own CHALLENGE and the client's AUTHENTICATE (MS-NLMP 2.2.1.3):
 * `user` and `domain` exactly as the AUTHENTICATE carries them (UserName, DomainName, decoded from UTF-16LE; the DC
 * computes NTOWFv2 over them), the 8-byte ServerChallenge, and the whole NtChallengeResponse (NTProofStr ‖ the
 * NTLMv2 client challenge blob, with its AV pairs, timestamp and MIC flag). The LmChallengeResponse is not sent (the
 * acceptor requires it all zero).
 *
 * What the CHALLENGE must say for it: MsvAvNbComputerName = this host's NetBIOS name as the domain knows it (smb.conf
 * `netbios name`, the computer account `net ads join` created) and MsvAvNbDomainName = the domain's NetBIOS name. A
 * Samba DC refuses (NT_STATUS_LOGON_FAILURE) a pass-through NTLMv2 response whose MsvAvNbComputerName is not the
 * computer of the secure channel that carries it (NTLMv2_RESPONSE_verify_netlogon_creds, the CVE-2016-2111
 * hardening); the DNS computer name (MsvAvDnsComputerName) may stay BRIDGE_DNS_IDENTITY (measured: accepted).
 * So with pass-through, the bridge's NetBIOS computer name is the member's, not the first label of
 * BRIDGE_DNS_IDENTITY. `memberNames()` reads both from smb.conf (testparm).
 *
 * How (measured against Samba 4.17): `ntlm_auth --helper-protocol=ntlm-server-1` (source3/utils/ntlm_auth.c), one
 * long-lived process, one request at a time:
 *
 *   Username:: <base64>            NT-Domain:: <base64>     (base64, so no name can break a line or the protocol)
 *   LANMAN-Challenge: <16 hex>     NT-Response: <hex>       Request-User-Session-Key: Yes       .
 *   → Authenticated: Yes / User-Session-Key: <32 hex> / .      or      Authenticated: No / Authentication-Error: … / .
 *
 * ntlm_auth asks winbindd (WINBINDD_PAM_AUTH_CRAP, the privileged pipe: the bridge's user must be in the
 * `winbindd_priv` group, or root), winbindd asks a DC over the machine account's NETLOGON secure channel
 * (NetrLogonSamLogonEx). For NTLMv2 the User-Session-Key is the SessionBaseKey of MS-NLMP 3.3.2
 * (HMAC_MD5(NTOWFv2, NTProofStr)), which for NTLMv2 is also the KeyExchangeKey. After a successful logon the
 * groups: `wbinfo --name-to-sid`, `wbinfo --user-sids` (winbindd answers from the info3 of that logon, nested and
 * domain local groups included) and `wbinfo --sid-to-name` for the canonical `DOMAIN\user`.
 *
 * Decisions:
 * - Only accounts of the configured domain (BRIDGE_NTLM_DOMAIN, its NetBIOS name) are accepted: a logon winbind
 *   accepts for a trusted domain's account is refused here (`winbind.other-domain`).
 * - Requests are validated before they are written (8-byte challenge, an NTLMv2-sized response, no NUL or empty
 *   names): ntlm_auth answers a malformed field at once, which would shift every later answer.
 * - One request at a time over one helper; a helper that dies or does not answer within `timeoutMs` is killed, the
 *   request fails (`winbind.unavailable`) and the next request starts a new helper.
 * - A refusal is a WinbindError with a reason for the log (`winbind.wrong-password`, `winbind.no-such-user`,
 *   `winbind.disabled`, `winbind.password-expired`, `winbind.locked-out`, `winbind.account-expired`,
 *   `winbind.logon-hours`, `winbind.refused` for any other, `winbind.no-session-key`, `winbind.other-domain`,
 *   `winbind.unavailable`); the client sees the same logon denied whatever it is.
 * - Options `ntlmAuth`, `wbinfo`, `config` (smb.conf) and `env` exist for tests and unusual installs; production uses
 *   the system's smb.conf and winbindd socket.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { isSid, normalizeSid } from './sid.ts';

export class WinbindError extends Error {
  override readonly name = 'WinbindError';
  constructor(
    readonly reason: string,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

export interface WinbindOptions {
  /** The NetBIOS name of the domain whose accounts are accepted (BRIDGE_NTLM_DOMAIN). */
  domain: string;
  /** Default `ntlm_auth` (Debian package winbind). */
  ntlmAuth?: string;
  /** Default `wbinfo`. */
  wbinfo?: string;
  /** Default `testparm`. */
  testparm?: string;
  /** smb.conf for ntlm_auth (`--configfile`). Default: the system's. */
  config?: string;
  /** Extra environment for the helpers. */
  env?: Record<string, string>;
  /** Per request. Default 15 s. */
  timeoutMs?: number;
}

export interface DomainLogonRequest {
  /** UserName of the AUTHENTICATE, as sent. */
  user: string;
  /** DomainName of the AUTHENTICATE, as sent (may be empty: the configured domain is used). */
  domain: string;
  /** The 8-byte ServerChallenge of our CHALLENGE. */
  serverChallenge: Uint8Array;
  /** The whole NtChallengeResponse (NTProofStr ‖ blob). */
  ntResponse: Uint8Array;
}

export interface DomainLogon {
  /** NTLMv2 SessionBaseKey (= KeyExchangeKey): 16 bytes. */
  sessionBaseKey: Uint8Array;
  /** `DOMAIN\user` as the domain spells it. */
  account: string;
  userSid: string;
  /** The user's group SIDs (primary group, nested and domain local groups included), user SID excluded. */
  groupSids: string[];
}

/**
 * ntlm_auth reports a refusal in the words of Samba's get_friendly_nt_error_msg (measured with 4.17): those, and the
 * NT_STATUS names in case a version prints them, to refusal reasons. Anything else (LOGON_FAILURE: "The attempted
 * logon is invalid", e.g. a response the DC refuses for its MsvAvNbComputerName) is `winbind.refused`. "Reading
 * winbind reply failed!" is what a helper outside the `winbindd_priv` group gets (measured: winbindd does not answer
 * its request on the unprivileged pipe): the host's setup, not the user's credentials, so `winbind.unavailable`.
 */
const REASONS: Array<[RegExp, string]> = [
  [/WRONG_PASSWORD|current password is not correct/i, 'winbind.wrong-password'],
  [/NO_SUCH_USER|account does not exist/i, 'winbind.no-such-user'],
  [/ACCOUNT_DISABLED|account is currently disabled/i, 'winbind.disabled'],
  [/PASSWORD_MUST_CHANGE|PASSWORD_EXPIRED|password must be changed|password has expired/i, 'winbind.password-expired'],
  [/ACCOUNT_LOCKED_OUT|automatically locked/i, 'winbind.locked-out'],
  [/ACCOUNT_EXPIRED|user account has expired/i, 'winbind.account-expired'],
  [/INVALID_LOGON_HOURS|INVALID_WORKSTATION|time restrictions|source workstation/i, 'winbind.logon-hours'],
  [/Reading winbind reply failed/i, 'winbind.unavailable'],
];

interface Pending {
  lines: string[];
  firstDot?: boolean;
  resolve(lines: string[]): void;
  reject(error: WinbindError): void;
  timer: NodeJS.Timeout;
}

export class WinbindAuthenticator {
  private helper: ChildProcessWithoutNullStreams | undefined;
  private buffered = '';
  private pending: Pending | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private readonly timeoutMs: number;
  readonly domain: string;

  constructor(private readonly options: WinbindOptions) {
    if (!/^[A-Za-z0-9][A-Za-z0-9.-]{0,14}$/.test(options.domain))
      throw new WinbindError('winbind.config', `"${options.domain}" is not a NetBIOS domain name`);
    this.domain = options.domain.toUpperCase();
    this.timeoutMs = options.timeoutMs ?? 15_000;
  }

  /** Checks an NTLMv2 response with the domain. Resolves with the session key and groups; rejects with WinbindError. */
  authenticate(request: DomainLogonRequest): Promise<DomainLogon> {
    const run = this.queue.then(() => this.authenticateNow(request));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * The NetBIOS names the CHALLENGE must carry for pass-through: this member's computer name (`netbios name`) and
   * the domain (`workgroup`), read from smb.conf with testparm (Debian package samba-common-bin). Rejects with
   * WinbindError when testparm fails or the workgroup is not the configured domain.
   */
  async memberNames(): Promise<{ computer: string; domain: string }> {
    const read = (parameter: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const args = ['-s', `--parameter-name=${parameter}`, ...(this.options.config ? [this.options.config] : [])];
        execFile(
          this.options.testparm ?? 'testparm',
          args,
          { env: this.env(), timeout: this.timeoutMs },
          (error, stdout) => {
            if (error) reject(new WinbindError('winbind.config', `testparm ${parameter}: ${error.message}`));
            else resolve(stdout.trim().toUpperCase());
          },
        );
      });
    const computer = await read('netbios name');
    const domain = await read('workgroup');
    if (domain !== this.domain)
      throw new WinbindError(
        'winbind.config',
        `smb.conf's workgroup is ${domain}, not ${this.domain} (BRIDGE_NTLM_DOMAIN)`,
      );
    return { computer, domain };
  }

  /** Ends the helper; later calls are refused. */
  close(): void {
    this.closed = true;
    this.stopHelper(new WinbindError('winbind.unavailable', 'closed'));
  }

  private async authenticateNow(request: DomainLogonRequest): Promise<DomainLogon> {
    if (this.closed) throw new WinbindError('winbind.unavailable', 'closed');
    const { user, serverChallenge, ntResponse } = request;
    const domain = request.domain === '' ? this.domain : request.domain;
    if (user === '' || /[\0\r\n]/.test(user) || /[\0\r\n]/.test(domain) || user.length > 256 || domain.length > 256) {
      throw new WinbindError('winbind.refused', 'empty or malformed user or domain name');
    }
    if (serverChallenge.length !== 8) throw new WinbindError('winbind.refused', 'the server challenge must be 8 bytes');
    // NTProofStr (16) + the blob's fixed part (28) + at least the MsvAvEOL pair (4): anything shorter is no NTLMv2.
    if (ntResponse.length < 48 || ntResponse.length > 4096)
      throw new WinbindError('winbind.refused', `an NT response of ${ntResponse.length} bytes is no NTLMv2 response`);
    const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
    const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
    const answer = await this.exchange([
      `Username:: ${b64(user)}`,
      `NT-Domain:: ${b64(domain)}`,
      `LANMAN-Challenge: ${hex(serverChallenge)}`,
      `NT-Response: ${hex(ntResponse)}`,
      'Request-User-Session-Key: Yes',
      '.',
    ]);
    const fields = new Map<string, string>();
    for (const line of answer) {
      const at = line.indexOf(': ');
      if (at > 0) fields.set(line.slice(0, at).toLowerCase(), line.slice(at + 2));
    }
    if (fields.has('error')) throw new WinbindError('winbind.unavailable', `ntlm_auth: ${fields.get('error')}`);
    if (fields.get('authenticated') !== 'Yes') {
      const text = fields.get('authentication-error') ?? answer.join(' | ');
      throw new WinbindError(REASONS.find(([pattern]) => pattern.test(text))?.[1] ?? 'winbind.refused', text);
    }
    const key = fields.get('user-session-key');
    if (key === undefined || !/^[0-9a-fA-F]{32}$/.test(key))
      throw new WinbindError('winbind.no-session-key', 'ntlm_auth gave no user session key');

    // The account as the domain knows it, and its groups.
    const typed = request.domain === '' && user.includes('@') ? user : `${domain}\\${user}`;
    const userSid = firstWord(await this.wbinfo(['--name-to-sid', typed]));
    if (!isSid(userSid)) throw new WinbindError('winbind.unavailable', `wbinfo --name-to-sid ${typed}: ${userSid}`);
    const named = (await this.wbinfo(['--sid-to-name', userSid])).trim();
    // "DOMAIN\user 1" (the last word is the SID type).
    const account = named.replace(/\s+\d+$/, '');
    const [accountDomain] = account.split('\\');
    if (accountDomain?.toUpperCase() !== this.domain)
      throw new WinbindError('winbind.other-domain', `${account} is not an account of ${this.domain}`);
    const ownSid = normalizeSid(userSid);
    const groupSids = (await this.wbinfo(['--user-sids', userSid]))
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && isSid(l))
      .map(normalizeSid)
      .filter((sid) => sid !== ownSid);
    return {
      sessionBaseKey: new Uint8Array(Buffer.from(key, 'hex')),
      account,
      userSid: ownSid,
      groupSids: [...new Set(groupSids)],
    };
  }

  private exchange(lines: string[]): Promise<string[]> {
    return new Promise<string[]>((resolve, reject) => {
      let helper: ChildProcessWithoutNullStreams;
      try {
        helper = this.ensureHelper();
      } catch (error) {
        reject(error instanceof WinbindError ? error : new WinbindError('winbind.unavailable', String(error)));
        return;
      }
      const timer = setTimeout(
        () =>
          this.stopHelper(
            new WinbindError('winbind.unavailable', `ntlm_auth did not answer within ${this.timeoutMs} ms`),
          ),
        this.timeoutMs,
      );
      this.pending = { lines: [], resolve, reject, timer };
      helper.stdin.write(`${lines.join('\n')}\n`);
    });
  }

  private ensureHelper(): ChildProcessWithoutNullStreams {
    if (this.helper) return this.helper;
    const args = [
      '--helper-protocol=ntlm-server-1',
      ...(this.options.config ? [`--configfile=${this.options.config}`] : []),
    ];
    const helper = spawn(this.options.ntlmAuth ?? 'ntlm_auth', args, {
      env: this.env(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.helper = helper;
    this.buffered = '';
    let stderr = '';
    helper.stdout.setEncoding('utf8');
    helper.stdout.on('data', (chunk: string) => {
      if (this.helper !== helper) return;
      this.buffered += chunk;
      for (let newline = this.buffered.indexOf('\n'); newline >= 0; newline = this.buffered.indexOf('\n')) {
        const line = this.buffered.slice(0, newline);
        this.buffered = this.buffered.slice(newline + 1);
        const pending = this.pending;
        if (!pending) continue; // nothing asked: ignore
        // A refusal ends with two "." lines: ntlm_auth.c prints "Authentication-Error: …\n.\n" and then the final
        // ".\n" of every answer. The answer is complete at the second one, so the next request is not answered by it.
        if (line === '.' && pending.lines.some((l) => l.startsWith('Authentication-Error:')) && !pending.firstDot) {
          pending.firstDot = true;
        } else if (line === '.') {
          this.pending = undefined;
          clearTimeout(pending.timer);
          pending.resolve(pending.lines);
        } else {
          pending.lines.push(line);
        }
      }
    });
    // A helper that died under a write (EPIPE) is reported by 'exit'; the stream error must not be unhandled.
    helper.stdin.on('error', () => undefined);
    helper.stderr.setEncoding('utf8');
    helper.stderr.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
    helper.on('error', (error) => {
      if (this.helper === helper)
        this.stopHelper(new WinbindError('winbind.unavailable', `ntlm_auth: ${error.message}`));
    });
    helper.on('exit', (code, signal) => {
      if (this.helper === helper)
        this.stopHelper(
          new WinbindError('winbind.unavailable', `ntlm_auth exited (${signal ?? code}): ${stderr.trim()}`),
        );
    });
    return helper;
  }

  private stopHelper(error: WinbindError): void {
    const helper = this.helper;
    this.helper = undefined;
    const pending = this.pending;
    this.pending = undefined;
    if (pending) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    if (helper && helper.exitCode === null && helper.signalCode === null) helper.kill('SIGKILL');
  }

  private wbinfo(args: string[]): Promise<string> {
    // wbinfo reads no smb.conf (its -s is --sid-to-name): it only talks to winbindd's socket.
    return new Promise((resolve, reject) => {
      execFile(
        this.options.wbinfo ?? 'wbinfo',
        args,
        { env: this.env(), timeout: this.timeoutMs },
        (error, stdout, stderr) => {
          if (error)
            reject(
              new WinbindError(
                'winbind.unavailable',
                `wbinfo ${args.join(' ')}: ${(stderr || stdout || error.message).trim()}`,
              ),
            );
          else resolve(stdout);
        },
      );
    });
  }

  private env(): NodeJS.ProcessEnv {
    return { ...process.env, ...this.options.env };
  }
}

function firstWord(text: string): string {
  return text.trim().split(/\s+/)[0] ?? '';
}
