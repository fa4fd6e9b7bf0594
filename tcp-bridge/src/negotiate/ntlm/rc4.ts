/**
 * RC4 (ARCFOUR), written here because OpenSSL 3 (Node 17+) refuses `rc4` without the legacy provider. NTLM needs it
 * for the key exchange (RC4K, MS-NLMP 6) and for sealing and the signature checksum (MS-NLMP 3.4.3, 3.4.4.2), where one
 * keystream runs per direction for the whole session: a `Rc4` object keeps its state between calls, and `clone()`
 * snapshots it (MS-SPNG 3.3.5.1 puts the handle back after the mechListMIC).
 */
export class Rc4 {
  private readonly s = new Uint8Array(256);
  private i = 0;
  private j = 0;

  constructor(key: Uint8Array) {
    if (key.length === 0 || key.length > 256) throw new RangeError('an RC4 key has 1 to 256 bytes');
    const s = this.s;
    for (let n = 0; n < 256; n++) s[n] = n;
    for (let n = 0, j = 0; n < 256; n++) {
      j = (j + s[n]! + key[n % key.length]!) & 0xff;
      const t = s[n]!;
      s[n] = s[j]!;
      s[j] = t;
    }
  }

  /** XORs `input` with the next `input.length` keystream bytes (encryption and decryption alike). */
  process(input: Uint8Array): Uint8Array {
    const s = this.s;
    const out = new Uint8Array(input.length);
    let { i, j } = this;
    for (let n = 0; n < input.length; n++) {
      i = (i + 1) & 0xff;
      const si = s[i]!;
      j = (j + si) & 0xff;
      const sj = s[j]!;
      s[i] = sj;
      s[j] = si;
      out[n] = input[n]! ^ s[(si + sj) & 0xff]!;
    }
    this.i = i;
    this.j = j;
    return out;
  }

  /** An independent copy of the current state. */
  clone(): Rc4 {
    const copy = Object.create(Rc4.prototype) as Rc4;
    (copy as unknown as { s: Uint8Array }).s = Uint8Array.from(this.s);
    copy.i = this.i;
    copy.j = this.j;
    return copy;
  }

  /** Takes over the state of `other` (a clone made earlier). */
  restore(other: Rc4): void {
    this.s.set(other.s);
    this.i = other.i;
    this.j = other.j;
  }
}

/** One-shot RC4 with a fresh key: MS-NLMP's RC4K(key, message). */
export function rc4k(key: Uint8Array, message: Uint8Array): Uint8Array {
  return new Rc4(key).process(message);
}
