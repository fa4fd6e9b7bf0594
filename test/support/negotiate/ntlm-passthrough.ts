/**
 * For the NTLM pass-through tests: a real NTLM initiator (gss-ntlmssp through python3-gssapi, raw NTLM without SPNEGO,
 * credentials from NTLM_USER_FILE) driven one message at a time, and the few acceptor-side steps of MS-NLMP the
 * test needs around winbind.ts, written here on their own (the bridge's NTLM acceptor is being restructured; this
 * file depends on none of it): a CHALLENGE with MsvAvTimestamp (so the client sends a MIC), the AUTHENTICATE's fields,
 * ExportedSessionKey from the session base key, the MIC, and unsealing the client's first gss_wrap token.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const PYTHON = '/usr/bin/python3';

const SCRIPT = `
import base64, sys, gssapi
ntlm = gssapi.OID.from_int_seq("1.3.6.1.4.1.311.2.2.10")
spnego = gssapi.OID.from_int_seq("1.3.6.1.5.5.2")
mech = spnego if sys.argv[3] == "spnego" else ntlm
F = gssapi.RequirementFlag
flags = F.integrity | F.confidentiality | F.replay_detection | F.out_of_sequence_detection
name = gssapi.Name(sys.argv[1], gssapi.NameType.hostbased_service)
creds = gssapi.Credentials(usage="initiate", mechs=[ntlm])
ctx = gssapi.SecurityContext(name=name, mech=mech, usage="initiate", flags=flags, creds=creds)
def out(b):
    sys.stdout.write(base64.b64encode(b).decode() + "\\n"); sys.stdout.flush()
out(ctx.step())
challenge = base64.b64decode(sys.stdin.readline().strip())
out(ctx.step(challenge))
if mech == ntlm:
    out(ctx.wrap(sys.argv[2].encode(), True).message)
else:
    sys.stdin.readline()
`;

/**
 * One NTLM logon by gss-ntlmssp as `DOMAIN:user:password` (its NTLM_USER_FILE line) for `host@<target>`. `raw`: NTLM
 * without SPNEGO; gss-ntlmssp then sends no MIC (it adds one only under SPNEGO) and, once done, one sealed message.
 * `spnego`: MIT's SPNEGO around it (tokens are NegTokenInit/NegTokenResp: use ntlmInSpnego / spnegoChallenge), with
 * a MIC, and no sealed message (the handshake is not finished).
 */
export class NtlmInitiator {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: string[] = [];
  private waiting: ((line: string) => void) | undefined;
  private stderr = '';

  constructor(dir: string, account: string, target: string, sealedMessage: string, mode: 'raw' | 'spnego' = 'spnego') {
    const file = join(dir, `ntlm-user-${randomBytes(6).toString('hex')}`);
    writeFileSync(file, `${account}\n`, { mode: 0o600 });
    this.child = spawn(PYTHON, ['-c', SCRIPT, target, sealedMessage, mode], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        NTLM_USER_FILE: file,
        KRB5CCNAME: 'FILE:/nonexistent',
        KRB5_CONFIG: '/dev/null',
      },
    });
    let buffered = '';
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      for (let at = buffered.indexOf('\n'); at >= 0; at = buffered.indexOf('\n')) {
        const line = buffered.slice(0, at);
        buffered = buffered.slice(at + 1);
        const waiter = this.waiting;
        this.waiting = undefined;
        if (waiter) waiter(line);
        else this.lines.push(line);
      }
    });
    this.child.stderr.on('data', (c: Buffer) => (this.stderr += c.toString()));
    this.child.stdin.on('error', () => undefined); // the initiator may be gone when the test closes it
  }

  /** The next message the initiator wrote (NEGOTIATE, AUTHENTICATE, then the sealed message). */
  next(): Promise<Uint8Array> {
    const line = this.lines.shift();
    if (line !== undefined) return Promise.resolve(new Uint8Array(Buffer.from(line, 'base64')));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the NTLM initiator said nothing: ${this.stderr}`)), 15_000);
      this.child.once('exit', () =>
        setTimeout(() => reject(new Error(`the NTLM initiator exited: ${this.stderr}`)), 50),
      );
      this.waiting = (l) => {
        clearTimeout(timer);
        resolve(new Uint8Array(Buffer.from(l, 'base64')));
      };
    });
  }

  send(token: Uint8Array): void {
    this.child.stdin.write(`${Buffer.from(token).toString('base64')}\n`);
  }

  close(): void {
    this.child.kill();
  }
}

/** The NTLM message inside an SPNEGO token: the DER OCTET STRING that starts with "NTLMSSP\\0" (mechToken or responseToken). */
export function ntlmInSpnego(token: Uint8Array): Uint8Array {
  const walk = (bytes: Uint8Array): Uint8Array | undefined => {
    let at = 0;
    while (at + 2 <= bytes.length) {
      const tag = bytes[at]!;
      let length = bytes[at + 1]!;
      let header = 2;
      if (length & 0x80) {
        const n = length & 0x7f;
        length = 0;
        for (let i = 0; i < n; i++) length = (length << 8) | bytes[at + 2 + i]!;
        header += n;
      }
      const content = bytes.subarray(at + header, at + header + length);
      if (tag === 0x04 && Buffer.from(content.subarray(0, 8)).toString('latin1') === 'NTLMSSP\0') return content;
      if (tag & 0x20) {
        const found = walk(content);
        if (found) return found;
      }
      at += header + length;
    }
    return undefined;
  };
  const found = walk(token);
  if (!found) throw new Error('no NTLM message in the SPNEGO token');
  return found;
}

const der = (tag: number, content: Uint8Array): Uint8Array => {
  const n = content.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return new Uint8Array([tag, ...length, ...content]);
};

/** A NegTokenResp (RFC 4178) accept-incomplete, supportedMech NTLM, responseToken `challenge`. */
export function spnegoChallenge(challenge: Uint8Array): Uint8Array {
  const ntlmOid = new Uint8Array([0x2b, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x02, 0x02, 0x0a]);
  const body = Buffer.concat([
    der(0xa0, der(0x0a, new Uint8Array([1]))),
    der(0xa1, der(0x06, ntlmOid)),
    der(0xa2, der(0x04, challenge)),
  ]);
  return der(0xa1, der(0x30, body));
}

const Flag = {
  Unicode: 0x1,
  RequestTarget: 0x4,
  Sign: 0x10,
  Seal: 0x20,
  Ntlm: 0x200,
  AlwaysSign: 0x8000,
  TargetTypeDomain: 0x10000,
  ExtendedSessionSecurity: 0x80000,
  TargetInfo: 0x800000,
  Version: 0x2000000,
  N128: 0x20000000,
  KeyExchange: 0x40000000,
  N56: 0x80000000,
} as const;

const utf16 = (text: string): Buffer => Buffer.from(text, 'utf16le');

/**
 * A CHALLENGE (MS-NLMP 2.2.1.2) for domain `domain` (MsvAvNbDomainName), NetBIOS computer `computer`
 * (MsvAvNbComputerName), DNS computer `dnsComputer`, with MsvAvTimestamp. For pass-through the DC refuses a response
 * whose MsvAvNbComputerName is not the NetBIOS name of the member whose secure channel carries it.
 */
export function challengeMessage(
  domain: string,
  computer: string,
  dnsDomain: string,
  dnsComputer = `${computer.toLowerCase()}.${dnsDomain}`,
): { message: Uint8Array; serverChallenge: Uint8Array } {
  const serverChallenge = randomBytes(8);
  const pair = (id: number, value: Buffer): Buffer =>
    Buffer.concat([Buffer.from([id & 0xff, id >> 8, value.length & 0xff, value.length >> 8]), value]);
  const timestamp = Buffer.alloc(8);
  timestamp.writeBigUInt64LE(BigInt(Date.now()) * 10_000n + 116_444_736_000_000_000n);
  const targetInfo = Buffer.concat([
    pair(2, utf16(domain)),
    pair(1, utf16(computer)),
    pair(4, utf16(dnsDomain)),
    pair(3, utf16(dnsComputer)),
    pair(7, timestamp),
    pair(0, Buffer.alloc(0)),
  ]);
  const targetName = utf16(domain);
  const flags =
    Flag.Unicode |
    Flag.RequestTarget |
    Flag.Sign |
    Flag.Seal |
    Flag.Ntlm |
    Flag.AlwaysSign |
    Flag.TargetTypeDomain |
    Flag.ExtendedSessionSecurity |
    Flag.TargetInfo |
    Flag.Version |
    Flag.N128 |
    Flag.KeyExchange |
    Flag.N56;
  const header = Buffer.alloc(56);
  header.write('NTLMSSP\0', 0, 'latin1');
  header.writeUInt32LE(2, 8);
  header.writeUInt16LE(targetName.length, 12);
  header.writeUInt16LE(targetName.length, 14);
  header.writeUInt32LE(56, 16);
  header.writeUInt32LE(flags >>> 0, 20);
  serverChallenge.copy(header, 24);
  header.writeUInt16LE(targetInfo.length, 40);
  header.writeUInt16LE(targetInfo.length, 42);
  header.writeUInt32LE(56 + targetName.length, 44);
  Buffer.from([10, 0, 0x63, 0x45, 0, 0, 0, 15]).copy(header, 48); // Version 10.0.17763, NTLMSSP revision 15
  return {
    message: new Uint8Array(Buffer.concat([header, targetName, targetInfo])),
    serverChallenge: new Uint8Array(serverChallenge),
  };
}

export interface Authenticate {
  user: string;
  domain: string;
  workstation: string;
  lmResponse: Uint8Array;
  ntResponse: Uint8Array;
  encryptedRandomSessionKey: Uint8Array;
  flags: number;
  mic: Uint8Array;
}

/** The fields of an AUTHENTICATE (MS-NLMP 2.2.1.3). */
export function parseAuthenticate(bytes: Uint8Array): Authenticate {
  const b = Buffer.from(bytes);
  if (b.toString('latin1', 0, 8) !== 'NTLMSSP\0' || b.readUInt32LE(8) !== 3) throw new Error('not an AUTHENTICATE');
  const field = (at: number): Buffer => b.subarray(b.readUInt32LE(at + 4), b.readUInt32LE(at + 4) + b.readUInt16LE(at));
  return {
    lmResponse: new Uint8Array(field(12)),
    ntResponse: new Uint8Array(field(20)),
    domain: field(28).toString('utf16le'),
    user: field(36).toString('utf16le'),
    workstation: field(44).toString('utf16le'),
    encryptedRandomSessionKey: new Uint8Array(field(52)),
    flags: b.readUInt32LE(60),
    mic: new Uint8Array(b.subarray(72, 88)),
  };
}

/** RC4 (OpenSSL 3 refuses it without the legacy provider). */
export function rc4(key: Uint8Array): (data: Uint8Array) => Uint8Array {
  const s = Array.from({ length: 256 }, (_, i) => i);
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  let i = 0;
  let j = 0;
  return (data) =>
    data.map((byte) => {
      i = (i + 1) & 0xff;
      j = (j + s[i]!) & 0xff;
      [s[i], s[j]] = [s[j]!, s[i]!];
      return byte ^ s[(s[i]! + s[j]!) & 0xff]!;
    });
}

const hmacMd5 = (key: Uint8Array, ...parts: Uint8Array[]): Uint8Array => {
  const h = createHmac('md5', key);
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
};

/**
 * The acceptor's side after the DC answered the session base key: ExportedSessionKey (KEY_EXCH), the MIC it must
 * match, and the client's first sealed message opened with the client-to-server sealing key.
 */
export function finishAcceptor(
  sessionBaseKey: Uint8Array,
  negotiate: Uint8Array,
  challenge: Uint8Array,
  authenticate: Uint8Array,
  sealed?: Uint8Array,
): { exportedSessionKey: Uint8Array; micMatches: boolean; plaintext: Uint8Array | undefined } {
  const auth = parseAuthenticate(authenticate);
  // NTLMv2: KeyExchangeKey = SessionBaseKey; with KEY_EXCH the client's random key comes RC4-encrypted under it.
  const exportedSessionKey = rc4(sessionBaseKey)(auth.encryptedRandomSessionKey);
  const zeroed = authenticate.slice();
  zeroed.fill(0, 72, 88);
  const mic = hmacMd5(exportedSessionKey, negotiate, challenge, zeroed);
  const micMatches = Buffer.from(mic).equals(Buffer.from(auth.mic));
  const sealKey = createHash('md5')
    .update(exportedSessionKey)
    .update(Buffer.from('session key to client-to-server sealing key magic constant\0', 'latin1'))
    .digest();
  // gss-ntlmssp's wrap token: the 16-byte signature, then the sealed message (sealed first with the same RC4 stream).
  const plaintext = sealed === undefined ? undefined : rc4(sealKey)(sealed.subarray(16));
  return { exportedSessionKey, micMatches, plaintext };
}

/** Whether the NTLMv2 response's AV pairs carry MsvAvFlags with the MIC bit (0x2). */
export function announcesMic(ntResponse: Uint8Array): boolean {
  const b = Buffer.from(ntResponse);
  for (let at = 16 + 28; at + 4 <= b.length; ) {
    const id = b.readUInt16LE(at);
    const length = b.readUInt16LE(at + 2);
    if (id === 0) return false;
    if (id === 6 && length === 4) return (b.readUInt32LE(at + 4) & 2) !== 0;
    at += 4 + length;
  }
  return false;
}
