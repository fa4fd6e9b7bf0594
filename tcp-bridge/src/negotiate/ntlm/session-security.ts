/**
 * NTLM session security (MS-NLMP 3.4.3, 3.4.4.2 with extended session security and key exchange): sealing and signing
 * in both directions of one context, one RC4 stream per direction for the whole session.
 *
 * Sign-only frames. MS-NLMP's signed-only payload is `signature ‖ plaintext` (what Windows SSPI sends with
 * SECQOP_WRAP_NO_ENCRYPT), but gss-ntlmssp's gss_wrap and .NET's managed NTLM seal whenever they wrap, SEAL
 * negotiated or not. Without SEAL the acceptor therefore takes the first frame either way (the signature decides,
 * over the plaintext in both cases) and from then on expects, and itself sends, the form the client used. A client
 * that negotiated SEAL always gets and must send sealed frames. (The gss-ntlmssp context of ../gssapi/ntlm.ts serves
 * both forms the same way.)
 */

import { ByteWriter } from '../../bytes.ts';
import { IntegrityError, type MicOptions } from '../security-context.ts';
import { constantTimeEqual, hmacMd5, sessionKeys } from './crypto.ts';
import { encodeSignature, SIGNATURE_SIZE, signatureProblem } from './messages.ts';
import { Rc4 } from './rc4.ts';

/** One direction's signing key, RC4 handle and sequence number. */
class Direction {
  seq = 0;

  constructor(
    readonly signKey: Uint8Array,
    readonly rc4: Rc4,
  ) {}

  /** `01000000 ‖ RC4(HMAC_MD5(SignKey, seq ‖ message)[0..8]) ‖ seq`: the RC4 handle moves on by 8 bytes. */
  signature(seq: number, message: Uint8Array): Uint8Array {
    const checksum = hmacMd5(this.signKey, new ByteWriter(4).uint32(seq).finish(), message).subarray(0, 8);
    return encodeSignature(this.rc4.process(checksum), seq);
  }
}

export type SignOnlyForm = 'sealed' | 'plain';

/** The keys of one context; `role` says which send: the acceptor sends with the server keys. */
export class NtlmSessionSecurity {
  private readonly send: Direction;
  private readonly receive: Direction;
  private broken = false;
  /** Without SEAL: the payload form the client uses (undefined until its first frame). */
  private signOnlyForm: SignOnlyForm | undefined;

  constructor(
    exported: Uint8Array,
    role: 'server' | 'client',
    readonly sealing: boolean,
  ) {
    const keys = sessionKeys(exported);
    const client = new Direction(keys.clientSign, new Rc4(keys.clientSeal));
    const server = new Direction(keys.serverSign, new Rc4(keys.serverSeal));
    this.send = role === 'server' ? server : client;
    this.receive = role === 'server' ? client : server;
  }

  /** The form of sign-only payloads, once known. */
  get form(): SignOnlyForm | undefined {
    return this.sealing ? 'sealed' : this.signOnlyForm;
  }

  /** Fixes the sign-only form before any frame arrived (a client role that chooses). */
  useForm(form: SignOnlyForm): void {
    if (!this.sealing) this.signOnlyForm = form;
  }

  getMic(message: Uint8Array, options?: MicOptions): Uint8Array {
    this.check();
    const saved = options?.mechListMic ? this.send.rc4.clone() : undefined;
    const signature = this.send.signature(this.send.seq++, message);
    if (saved) this.send.rc4.restore(saved);
    return signature;
  }

  verifyMic(message: Uint8Array, mic: Uint8Array, options?: MicOptions): void {
    this.check();
    const saved = options?.mechListMic ? this.receive.rc4.clone() : undefined;
    const error = this.verify(this.receive, mic, () => message);
    if (error) throw this.breakWith(error);
    this.receive.seq++;
    if (saved) this.receive.rc4.restore(saved);
  }

  wrap(plain: Uint8Array): Uint8Array {
    this.check();
    const out = new Uint8Array(SIGNATURE_SIZE + plain.length);
    // Sign-only before the client's first frame (NMF never has the server write first): MS-NLMP's form.
    if ((this.form ?? 'plain') === 'plain') {
      out.set(this.send.signature(this.send.seq++, plain));
      out.set(plain, SIGNATURE_SIZE);
    } else {
      // MS-NLMP 3.4.3 SEAL: the data is encrypted first, then the checksum with the same handle.
      out.set(this.send.rc4.process(plain), SIGNATURE_SIZE);
      out.set(this.send.signature(this.send.seq++, plain));
    }
    return out;
  }

  unwrap(payload: Uint8Array): Uint8Array {
    this.check();
    if (payload.length < SIGNATURE_SIZE)
      throw this.breakWith(new IntegrityError('Malformed', `a ${payload.length}-byte payload has no NTLM signature`));
    const signature = payload.subarray(0, SIGNATURE_SIZE);
    const body = payload.subarray(SIGNATURE_SIZE);
    const form = this.form;
    if (form !== undefined) {
      const plain = form === 'sealed' ? this.receive.rc4.process(body) : body.slice();
      const error = this.verify(this.receive, signature, () => plain);
      if (error) throw this.breakWith(error);
      this.receive.seq++;
      return plain;
    }
    // Sign-only, first frame: try the plaintext form (MS-NLMP), then the sealed one (gss-ntlmssp, .NET managed).
    const start = this.receive.rc4.clone();
    if (this.verify(this.receive, signature, () => body) === undefined) {
      this.signOnlyForm = 'plain';
      this.receive.seq++;
      return body.slice();
    }
    this.receive.rc4.restore(start);
    const plain = this.receive.rc4.process(body);
    const error = this.verify(this.receive, signature, () => plain);
    if (error) throw this.breakWith(error);
    this.signOnlyForm = 'sealed';
    this.receive.seq++;
    return plain;
  }

  /** Forgets the keystreams: every later call throws. */
  dispose(): void {
    this.broken = true;
  }

  /** Checks `signature` over the message (computed lazily: unsealing must come first) at the expected sequence number. */
  private verify(direction: Direction, signature: Uint8Array, message: () => Uint8Array): IntegrityError | undefined {
    const problem = signatureProblem(signature, direction.seq);
    if (problem) return new IntegrityError(problem.kind, problem.message);
    const expected = direction.signature(direction.seq, message());
    if (!constantTimeEqual(expected.subarray(4, 12), signature.subarray(4, 12)))
      return new IntegrityError('BadSignature', 'the NTLM signature does not match');
    return undefined;
  }

  private check(): void {
    if (this.broken) throw new IntegrityError('Broken', 'the NTLM context failed earlier and is closed');
  }

  private breakWith(error: IntegrityError): IntegrityError {
    this.broken = true;
    return error;
  }
}
