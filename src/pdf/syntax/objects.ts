/** The PDF object model (ISO 32000-2 §7.3), only as much as structural validation reads. */

export class PdfName {
  constructor(readonly value: string) {}
}

export class PdfRef {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
  get key(): string {
    return `${this.num} ${this.gen}`;
  }
}

/** String contents are never needed by validation, so they are kept raw and undecoded. */
export class PdfString {
  constructor(readonly bytes: Uint8Array) {}
}

export type PdfDict = Map<string, PdfValue>;

export class PdfStream {
  constructor(
    readonly dict: PdfDict,
    /** Offset of the first data byte in the file or decoded object stream. */
    readonly dataStart: number,
    /** Encoded bytes (an indirect /Length is resolved by the parser, or `endstream` found). */
    readonly data: Uint8Array,
  ) {}
}

export type PdfValue = null | boolean | number | PdfName | PdfRef | PdfString | PdfValue[] | PdfDict | PdfStream;

export const isDict = (v: PdfValue | undefined): v is PdfDict => v instanceof Map;
export const isName = (v: PdfValue | undefined, name?: string): v is PdfName =>
  v instanceof PdfName && (name === undefined || v.value === name);

/** Why a file cannot be read structurally. `invalid` is a verdict on the file; `unsupported` means "ask the engine". */
export class PdfSyntaxError extends Error {
  constructor(
    readonly kind: 'invalid' | 'unsupported' | 'too-complex',
    message: string,
  ) {
    super(message);
    this.name = 'PdfSyntaxError';
  }
}
