/**
 * A CCITT Group 4 (ITU T.6) encoder for bilevel images, as fax machines and office scanners write them into PDFs
 * (`/CCITTFaxDecode` with `/K -1`), so tests and the bench make fax pages in code. Rows are coded two-dimensionally
 * against the row above (an imaginary white row first), no EOLs, ended by EOFB.
 */

/** T.4 tables 2 and 3: [run length, code as a string of bits], terminating codes 0..63 then make-up codes. */
const WHITE: [number, string][] = [
  [0, '00110101'],
  [1, '000111'],
  [2, '0111'],
  [3, '1000'],
  [4, '1011'],
  [5, '1100'],
  [6, '1110'],
  [7, '1111'],
  [8, '10011'],
  [9, '10100'],
  [10, '00111'],
  [11, '01000'],
  [12, '001000'],
  [13, '000011'],
  [14, '110100'],
  [15, '110101'],
  [16, '101010'],
  [17, '101011'],
  [18, '0100111'],
  [19, '0001100'],
  [20, '0001000'],
  [21, '0010111'],
  [22, '0000011'],
  [23, '0000100'],
  [24, '0101000'],
  [25, '0101011'],
  [26, '0010011'],
  [27, '0100100'],
  [28, '0011000'],
  [29, '00000010'],
  [30, '00000011'],
  [31, '00011010'],
  [32, '00011011'],
  [33, '00010010'],
  [34, '00010011'],
  [35, '00010100'],
  [36, '00010101'],
  [37, '00010110'],
  [38, '00010111'],
  [39, '00101000'],
  [40, '00101001'],
  [41, '00101010'],
  [42, '00101011'],
  [43, '00101100'],
  [44, '00101101'],
  [45, '00000100'],
  [46, '00000101'],
  [47, '00001010'],
  [48, '00001011'],
  [49, '01010010'],
  [50, '01010011'],
  [51, '01010100'],
  [52, '01010101'],
  [53, '00100100'],
  [54, '00100101'],
  [55, '01011000'],
  [56, '01011001'],
  [57, '01011010'],
  [58, '01011011'],
  [59, '01001010'],
  [60, '01001011'],
  [61, '00110010'],
  [62, '00110011'],
  [63, '00110100'],
  [64, '11011'],
  [128, '10010'],
  [192, '010111'],
  [256, '0110111'],
  [320, '00110110'],
  [384, '00110111'],
  [448, '01100100'],
  [512, '01100101'],
  [576, '01101000'],
  [640, '01100111'],
  [704, '011001100'],
  [768, '011001101'],
  [832, '011010010'],
  [896, '011010011'],
  [960, '011010100'],
  [1024, '011010101'],
  [1088, '011010110'],
  [1152, '011010111'],
  [1216, '011011000'],
  [1280, '011011001'],
  [1344, '011011010'],
  [1408, '011011011'],
  [1472, '010011000'],
  [1536, '010011001'],
  [1600, '010011010'],
  [1664, '011000'],
  [1728, '010011011'],
];
const BLACK: [number, string][] = [
  [0, '0000110111'],
  [1, '010'],
  [2, '11'],
  [3, '10'],
  [4, '011'],
  [5, '0011'],
  [6, '0010'],
  [7, '00011'],
  [8, '000101'],
  [9, '000100'],
  [10, '0000100'],
  [11, '0000101'],
  [12, '0000111'],
  [13, '00000100'],
  [14, '00000111'],
  [15, '000011000'],
  [16, '0000010111'],
  [17, '0000011000'],
  [18, '0000001000'],
  [19, '00001100111'],
  [20, '00001101000'],
  [21, '00001101100'],
  [22, '00000110111'],
  [23, '00000101000'],
  [24, '00000010111'],
  [25, '00000011000'],
  [26, '000011001010'],
  [27, '000011001011'],
  [28, '000011001100'],
  [29, '000011001101'],
  [30, '000001101000'],
  [31, '000001101001'],
  [32, '000001101010'],
  [33, '000001101011'],
  [34, '000011010010'],
  [35, '000011010011'],
  [36, '000011010100'],
  [37, '000011010101'],
  [38, '000011010110'],
  [39, '000011010111'],
  [40, '000001101100'],
  [41, '000001101101'],
  [42, '000011011010'],
  [43, '000011011011'],
  [44, '000001010100'],
  [45, '000001010101'],
  [46, '000001010110'],
  [47, '000001010111'],
  [48, '000001100100'],
  [49, '000001100101'],
  [50, '000001010010'],
  [51, '000001010011'],
  [52, '000000100100'],
  [53, '000000110111'],
  [54, '000000111000'],
  [55, '000000100111'],
  [56, '000000101000'],
  [57, '000001011000'],
  [58, '000001011001'],
  [59, '000000101011'],
  [60, '000000101100'],
  [61, '000001011010'],
  [62, '000001100110'],
  [63, '000001100111'],
  [64, '0000001111'],
  [128, '000011001000'],
  [192, '000011001001'],
  [256, '000001011011'],
  [320, '000000110011'],
  [384, '000000110100'],
  [448, '000000110101'],
  [512, '0000001101100'],
  [576, '0000001101101'],
  [640, '0000001001010'],
  [704, '0000001001011'],
  [768, '0000001001100'],
  [832, '0000001001101'],
  [896, '0000001110010'],
  [960, '0000001110011'],
  [1024, '0000001110100'],
  [1088, '0000001110101'],
  [1152, '0000001110110'],
  [1216, '0000001110111'],
  [1280, '0000001010010'],
  [1344, '0000001010011'],
  [1408, '0000001010100'],
  [1472, '0000001010101'],
  [1536, '0000001011010'],
  [1600, '0000001011011'],
  [1664, '0000001100100'],
  [1728, '0000001100101'],
];
/** T.4 table 3b: make-up codes shared by both colours, for rows wider than 1791 pixels. */
const EXTENDED: [number, string][] = [
  [1792, '00000001000'],
  [1856, '00000001100'],
  [1920, '00000001101'],
  [1984, '000000010010'],
  [2048, '000000010011'],
  [2112, '000000010100'],
  [2176, '000000010101'],
  [2240, '000000010110'],
  [2304, '000000010111'],
  [2368, '000000011100'],
  [2432, '000000011101'],
  [2496, '000000011110'],
  [2560, '000000011111'],
];
/** T.4 table 4: the two-dimensional mode codes. VERTICAL is indexed by a1 - b1 + 3. */
const PASS = '0001';
const HORIZONTAL = '001';
const VERTICAL = ['0000010', '000010', '010', '1', '011', '000011', '0000011'];
const EOFB = '000000000001000000000001';

class Bits {
  private readonly bytes: number[] = [];
  private acc = 0;
  private n = 0;

  put(code: string): void {
    for (let i = 0; i < code.length; i++) {
      this.acc = (this.acc << 1) | (code.charCodeAt(i) - 48);
      if (++this.n === 8) {
        this.bytes.push(this.acc);
        this.acc = 0;
        this.n = 0;
      }
    }
  }

  finish(): Uint8Array {
    if (this.n > 0) this.put('0'.repeat(8 - this.n));
    return Uint8Array.from(this.bytes);
  }
}

const whiteCodes = new Map([...WHITE, ...EXTENDED]);
const blackCodes = new Map([...BLACK, ...EXTENDED]);

/** A run as make-up codes (largest first, 2560 repeated for very long runs) and one terminating code. */
function putRun(bits: Bits, run: number, black: boolean): void {
  const codes = black ? blackCodes : whiteCodes;
  while (run >= 2624) {
    bits.put(codes.get(2560)!);
    run -= 2560;
  }
  if (run >= 64) {
    const makeUp = run - (run % 64);
    bits.put(codes.get(makeUp)!);
    run -= makeUp;
  }
  bits.put(codes.get(run)!);
}

/**
 * Encodes a bilevel image (`black[i]` 1 where the pixel is black, rows top to bottom) as T.6 data for a PDF image with
 * `/Filter /CCITTFaxDecode /DecodeParms << /K -1 /Columns width /Rows height >>` (BlackIs1 false: 0 bits are black).
 */
export function encodeG4({ width, height, black }: { width: number; height: number; black: Uint8Array }): Uint8Array {
  const bits = new Bits();
  let reference: Uint8Array = new Uint8Array(width); // the imaginary white row above the first
  for (let y = 0; y < height; y++) {
    const row = black.subarray(y * width, (y + 1) * width);
    /** The colour at x, white left of the row. */
    const at = (line: Uint8Array, x: number) => (x < 0 ? 0 : line[x]!);
    /** The first changing element after `from` (a pixel whose colour differs from the one on its left) of colour `colour`, or width. */
    const next = (line: Uint8Array, from: number, colour?: number): number => {
      for (let x = from + 1; x < width; x++)
        if (line[x] !== at(line, x - 1) && (colour === undefined || line[x] === colour)) return x;
      return width;
    };
    let a0 = -1;
    let colour = 0;
    while (a0 < width) {
      const a1 = next(row, a0);
      const a2 = next(row, a1);
      // b1: on the reference row, the first changing element after a0 of the colour opposite to a0's
      const b1 = next(reference, a0, 1 - colour);
      const b2 = next(reference, b1);
      if (b2 < a1) {
        bits.put(PASS);
        a0 = b2;
      } else if (Math.abs(a1 - b1) <= 3) {
        bits.put(VERTICAL[a1 - b1 + 3]!);
        a0 = a1;
        colour = 1 - colour;
      } else {
        bits.put(HORIZONTAL);
        putRun(bits, a1 - Math.max(0, a0), colour === 1);
        putRun(bits, a2 - a1, colour === 0);
        a0 = a2;
      }
    }
    reference = row;
  }
  bits.put(EOFB);
  return bits.finish();
}
