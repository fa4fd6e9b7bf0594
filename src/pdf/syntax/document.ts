import { decodeStream } from './filters.ts';
import { PdfParser, indexOf, isDigit, lastIndexOf } from './parser.ts';
import { PdfRef, PdfStream, PdfSyntaxError, isDict, isName, type PdfDict, type PdfValue } from './objects.ts';

/** Where an object lives: at a byte offset, or as the n-th object of an object stream. */
type XrefEntry =
  | { kind: 'offset'; offset: number; gen: number }
  | { kind: 'compressed'; stream: number; index: number };

export interface ReadLimits {
  /** Largest decoded size of one object or cross-reference stream. */
  maxStreamBytes: number;
  /** Called often during long loops; throws to abandon the work (time budget). */
  checkpoint: () => void;
}

const enc = (s: string) => new TextEncoder().encode(s);
const STARTXREF = enc('startxref');
const TRAILER = enc('trailer');

/**
 * Random access to the indirect objects of a PDF file: cross-reference tables and streams followed
 * through /Prev (loops ignored), with a full scan for `n g obj` when they are missing or wrong.
 */
export class PdfDocument {
  private readonly xref = new Map<number, XrefEntry>();
  private readonly cache = new Map<string, PdfValue>();
  private readonly objectStreams = new Map<number, { bytes: Uint8Array; offsets: Map<number, number> }>();
  private scanned: Map<number, XrefEntry> | undefined;
  readonly trailer: PdfDict;
  /** True when the cross-reference data was unusable and the file was read by scanning. */
  readonly repaired: boolean;

  constructor(
    readonly bytes: Uint8Array,
    /** Offset of `%PDF-`: writers that prepend junk leave offsets relative to it. */
    private readonly headerOffset: number,
    private readonly limits: ReadLimits,
  ) {
    let trailer: PdfDict | undefined;
    try {
      trailer = this.readXrefChain();
    } catch (e) {
      if (e instanceof PdfSyntaxError && e.kind === 'too-complex') throw e;
      trailer = undefined;
    }
    this.repaired = !trailer?.has('Root');
    if (this.repaired) {
      this.xref.clear();
      trailer = this.rebuild();
    }
    this.trailer = trailer!;
  }

  get encrypted(): boolean {
    return this.trailer.has('Encrypt');
  }

  /** Resolves a reference (or returns a direct value); a missing or unreadable object is null, as the spec says. */
  resolve(value: PdfValue | undefined): PdfValue {
    if (!(value instanceof PdfRef)) return value ?? null;
    const cached = this.cache.get(value.key);
    if (cached !== undefined) return cached;
    this.cache.set(value.key, null); // a reference to itself resolves to null instead of looping
    const resolved = this.load(value);
    this.cache.set(value.key, resolved);
    return resolved;
  }

  resolveDict(value: PdfValue | undefined): PdfDict | undefined {
    const v = this.resolve(value);
    return isDict(v) ? v : v instanceof PdfStream ? v.dict : undefined;
  }

  private load(ref: PdfRef): PdfValue {
    const entry = this.xref.get(ref.num);
    if (entry?.kind === 'compressed') return this.loadCompressed(ref.num, entry);
    const fromXref = entry ? this.loadAt(entry.offset, ref.num) : undefined;
    if (fromXref !== undefined) return fromXref;
    // The table was wrong about this object: look where a scan of the file finds it.
    const found = this.scan().get(ref.num);
    if (found?.kind === 'offset' && found.offset !== entry?.offset) return this.loadAt(found.offset, ref.num) ?? null;
    return null;
  }

  private loadAt(offset: number, num: number): PdfValue | undefined {
    for (const base of this.candidates(offset)) {
      const parser = this.parser(base);
      const header = parser.readObjectHeader();
      if (header?.num !== num) continue;
      try {
        return parser.readObject();
      } catch (e) {
        if (e instanceof PdfSyntaxError && e.kind !== 'invalid') throw e;
        return null;
      }
    }
    return undefined;
  }

  private loadCompressed(num: number, entry: { stream: number; index: number }): PdfValue {
    let objstm = this.objectStreams.get(entry.stream);
    if (!objstm) {
      const stream = this.resolve(new PdfRef(entry.stream, 0));
      if (!(stream instanceof PdfStream)) return null;
      // Object streams of an encrypted file are themselves encrypted; the engine reads those.
      if (this.encrypted) throw new PdfSyntaxError('unsupported', 'encrypted object stream');
      const bytes = decodeStream(stream, this.limits.maxStreamBytes);
      const n = stream.dict.get('N');
      const first = stream.dict.get('First');
      if (typeof n !== 'number' || typeof first !== 'number') return null;
      const offsets = new Map<number, number>();
      const p = new PdfParser(bytes);
      for (let i = 0; i < n; i++) {
        const objNum = Number(p.readToken());
        const objOff = Number(p.readToken());
        if (!Number.isInteger(objNum) || !Number.isInteger(objOff)) break;
        if (!offsets.has(objNum)) offsets.set(objNum, first + objOff);
      }
      objstm = { bytes, offsets };
      this.objectStreams.set(entry.stream, objstm);
    }
    const at = objstm.offsets.get(num);
    if (at === undefined) return null;
    try {
      return new PdfParser(objstm.bytes, at).readObject();
    } catch (e) {
      if (e instanceof PdfSyntaxError && e.kind !== 'invalid') throw e;
      return null;
    }
  }

  /** Where an offset from the file may point: as written, and shifted by junk before the header, when there is any. */
  private candidates(offset: number): number[] {
    const shifted = this.headerOffset > 0 ? [offset, offset + this.headerOffset] : [offset];
    return shifted.filter((at) => at >= 0 && at < this.bytes.length);
  }

  private parser(pos: number): PdfParser {
    return new PdfParser(this.bytes, pos, (ref) => {
      const v = this.resolve(ref);
      return typeof v === 'number' ? v : undefined;
    });
  }

  /** Follows startxref and /Prev (and /XRefStm of hybrid files); the newest section's entries win. */
  private readXrefChain(): PdfDict | undefined {
    const at = lastIndexOf(this.bytes, STARTXREF, this.bytes.length - STARTXREF.length);
    if (at < 0) return undefined;
    const p = new PdfParser(this.bytes, at + STARTXREF.length);
    let offset: number | undefined = Number(p.readToken());
    let newest: PdfDict | undefined;
    const seen = new Set<number>();
    while (offset !== undefined && Number.isInteger(offset) && !seen.has(offset)) {
      this.limits.checkpoint();
      seen.add(offset);
      let section: PdfDict | undefined;
      for (const at of this.candidates(offset)) {
        section = this.readXrefSection(at);
        if (section) break;
      }
      if (!section) return newest?.has('Root') ? newest : undefined;
      newest ??= section;
      const hybrid = section.get('XRefStm');
      if (typeof hybrid === 'number' && !seen.has(hybrid)) {
        seen.add(hybrid);
        this.readXrefSection(hybrid);
      }
      const prev: PdfValue | undefined = section.get('Prev');
      offset = typeof prev === 'number' ? prev : undefined;
    }
    return newest;
  }

  /** Reads one classic table or cross-reference stream at `offset`; returns its trailer dictionary. */
  private readXrefSection(offset: number): PdfDict | undefined {
    if (offset < 0 || offset >= this.bytes.length) return undefined;
    const p = this.parser(offset);
    if (p.peekToken() === 'xref') {
      p.readToken();
      for (;;) {
        this.limits.checkpoint();
        const first = p.peekToken();
        if (first === undefined || !/^\d+$/.test(first)) break;
        p.readToken();
        const count = Number(p.readToken());
        if (!Number.isInteger(count) || count < 0) return undefined;
        for (let i = 0; i < count; i++) {
          const off = Number(p.readToken());
          const gen = Number(p.readToken());
          const type = p.readToken();
          if (!Number.isInteger(off) || (type !== 'n' && type !== 'f')) return undefined;
          const num = Number(first) + i;
          if (type === 'n' && off > 0 && !this.xref.has(num)) this.xref.set(num, { kind: 'offset', offset: off, gen });
          if (i % 4096 === 0) this.limits.checkpoint();
        }
      }
      if (p.readToken() !== 'trailer') return undefined;
      const trailer = p.readObject();
      return isDict(trailer) ? trailer : undefined;
    }
    const header = p.readObjectHeader();
    if (!header) return undefined;
    const stream = p.readObject();
    if (!(stream instanceof PdfStream) || !isName(stream.dict.get('Type'), 'XRef')) return undefined;
    this.readXrefStream(stream);
    return stream.dict;
  }

  private readXrefStream(stream: PdfStream): void {
    const widths = stream.dict.get('W');
    const size = stream.dict.get('Size');
    if (!Array.isArray(widths) || widths.length < 3 || typeof size !== 'number')
      throw new PdfSyntaxError('invalid', 'bad xref stream');
    const w = widths.slice(0, 3).map((x) => (typeof x === 'number' && x >= 0 && x <= 8 ? x : NaN));
    if (w.some(Number.isNaN)) throw new PdfSyntaxError('invalid', 'bad xref stream widths');
    const index = stream.dict.get('Index');
    const ranges = Array.isArray(index) ? index.filter((x): x is number => typeof x === 'number') : [0, size];
    const data = decodeStream(stream, this.limits.maxStreamBytes);
    const rowLength = w[0]! + w[1]! + w[2]!;
    let pos = 0;
    for (let r = 0; r + 1 < ranges.length; r += 2) {
      for (let i = 0; i < ranges[r + 1]!; i++) {
        if (pos + rowLength > data.length) return;
        const field = (width: number) => {
          let v = 0;
          for (let k = 0; k < width; k++) v = v * 256 + data[pos++]!;
          return v;
        };
        const type = w[0] === 0 ? 1 : field(w[0]!);
        const a = field(w[1]!);
        const b = field(w[2]!);
        const num = ranges[r]! + i;
        if (this.xref.has(num)) continue;
        if (type === 1) this.xref.set(num, { kind: 'offset', offset: a, gen: b });
        else if (type === 2) this.xref.set(num, { kind: 'compressed', stream: a, index: b });
        if (i % 4096 === 0) this.limits.checkpoint();
      }
    }
  }

  /** Offsets of every `n g obj` in the file; a later definition of the same number wins, as in an incremental update. */
  private scan(): Map<number, XrefEntry> {
    if (this.scanned) return this.scanned;
    const found = new Map<number, XrefEntry>();
    const b = this.bytes;
    let seen = 0;
    for (let i = indexOf(b, OBJ); i >= 0; i = indexOf(b, OBJ, i + 3)) {
      if (++seen % 1024 === 0) this.limits.checkpoint();
      // walk back over "num gen " before "obj"
      let j = i - 1;
      while (j >= 0 && (b[j] === 0x20 || b[j] === 0x0d || b[j] === 0x0a)) j--;
      const genEnd = j + 1;
      while (j >= 0 && isDigit(b[j]!)) j--;
      const genStart = j + 1;
      if (genStart === genEnd) continue;
      while (j >= 0 && (b[j] === 0x20 || b[j] === 0x0d || b[j] === 0x0a)) j--;
      const numEnd = j + 1;
      while (j >= 0 && isDigit(b[j]!)) j--;
      const numStart = j + 1;
      if (numStart === numEnd || numStart === genStart) continue;
      if (isDigit(b[i + 3] ?? 0x20)) continue;
      found.set(digits(b, numStart, numEnd), { kind: 'offset', offset: numStart, gen: digits(b, genStart, genEnd) });
    }
    this.scanned = found;
    return found;
  }

  /** Reconstructs the cross-reference data from a scan; the trailer is the last `trailer` or XRef-stream dictionary with /Root. */
  private rebuild(): PdfDict {
    for (const [num, entry] of this.scan()) this.xref.set(num, entry);
    let trailer: PdfDict | undefined;
    for (
      let at = lastIndexOf(this.bytes, TRAILER);
      at >= 0 && !trailer;
      at = at > 0 ? lastIndexOf(this.bytes, TRAILER, at - 1) : -1
    ) {
      try {
        const p = this.parser(at + TRAILER.length);
        const dict = p.readObject();
        if (isDict(dict) && dict.has('Root')) trailer = dict;
      } catch {
        // keep looking further up
      }
    }
    if (!trailer) {
      for (const num of [...this.xref.keys()].reverse()) {
        const v = this.resolve(new PdfRef(num, 0));
        if (v instanceof PdfStream && isName(v.dict.get('Type'), 'XRef') && v.dict.has('Root')) {
          // object streams listed only in this xref stream become reachable
          try {
            this.readXrefStream(v);
          } catch {
            // the scan already holds every uncompressed object
          }
          trailer = v.dict;
          break;
        }
      }
    }
    if (!trailer) throw new PdfSyntaxError('invalid', 'no trailer with /Root');
    return trailer;
  }
}

const OBJ = enc('obj');

function digits(b: Uint8Array, start: number, end: number): number {
  let n = 0;
  for (let i = start; i < end; i++) n = n * 10 + b[i]! - 0x30;
  return n;
}
