/**
 * MD4 (RFC 1320), written here because OpenSSL 3 (Node 17+) refuses `md4` without the legacy provider. Only used to
 * turn a password into its NT hash (MS-NLMP 3.3.1 NTOWFv1 = MD4(UNICODE(Passwd))), once per account when the users
 * file is read.
 */
export function md4(message: Uint8Array): Uint8Array {
  const bitLength = message.length * 8;
  const padded = new Uint8Array((((message.length + 8) >> 6) + 1) << 6);
  padded.set(message);
  padded[message.length] = 0x80;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, bitLength >>> 0, true);
  view.setUint32(padded.length - 4, Math.floor(bitLength / 0x100000000), true);

  let a = 0x67452301;
  let b = 0xefcdab89;
  let c = 0x98badcfe;
  let d = 0x10325476;
  const x = new Uint32Array(16);
  const rotl = (v: number, s: number): number => (v << s) | (v >>> (32 - s));
  const f = (p: number, q: number, r: number): number => (p & q) | (~p & r);
  const g = (p: number, q: number, r: number): number => (p & q) | (p & r) | (q & r);
  const h = (p: number, q: number, r: number): number => p ^ q ^ r;

  for (let block = 0; block < padded.length; block += 64) {
    for (let n = 0; n < 16; n++) x[n] = view.getUint32(block + n * 4, true);
    const [aa, bb, cc, dd] = [a, b, c, d];
    // Round 1: [abcd k s] a = (a + F(b,c,d) + X[k]) <<< s
    for (const k of [0, 4, 8, 12]) {
      a = rotl((a + f(b, c, d) + x[k]!) | 0, 3);
      d = rotl((d + f(a, b, c) + x[k + 1]!) | 0, 7);
      c = rotl((c + f(d, a, b) + x[k + 2]!) | 0, 11);
      b = rotl((b + f(c, d, a) + x[k + 3]!) | 0, 19);
    }
    // Round 2: a = (a + G(b,c,d) + X[k] + 5A827999) <<< s
    for (const k of [0, 1, 2, 3]) {
      a = rotl((a + g(b, c, d) + x[k]! + 0x5a827999) | 0, 3);
      d = rotl((d + g(a, b, c) + x[k + 4]! + 0x5a827999) | 0, 5);
      c = rotl((c + g(d, a, b) + x[k + 8]! + 0x5a827999) | 0, 9);
      b = rotl((b + g(c, d, a) + x[k + 12]! + 0x5a827999) | 0, 13);
    }
    // Round 3: a = (a + H(b,c,d) + X[k] + 6ED9EBA1) <<< s
    for (const k of [0, 2, 1, 3]) {
      a = rotl((a + h(b, c, d) + x[k]! + 0x6ed9eba1) | 0, 3);
      d = rotl((d + h(a, b, c) + x[k + 8]! + 0x6ed9eba1) | 0, 9);
      c = rotl((c + h(d, a, b) + x[k + 4]! + 0x6ed9eba1) | 0, 11);
      b = rotl((b + h(c, d, a) + x[k + 12]! + 0x6ed9eba1) | 0, 15);
    }
    a = (a + aa) | 0;
    b = (b + bb) | 0;
    c = (c + cc) | 0;
    d = (d + dd) | 0;
  }
  const out = new Uint8Array(16);
  const outView = new DataView(out.buffer);
  for (const [n, word] of [a, b, c, d].entries()) outView.setUint32(n * 4, word >>> 0, true);
  return out;
}
