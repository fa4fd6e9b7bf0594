import type { PageChar } from '../../pdf/engine/port.ts';

/** A run of text on one line with no wide gap in it: one printed value or heading ("CHF", "1 949.75", "Betrag"). */
export interface TextRun {
  text: string;
  /** Left and right edges and vertical centre, in points from the page's top left. */
  left: number;
  right: number;
  y: number;
  /** Font size in points. */
  size: number;
}

/** Characters closer than this (in font sizes) are one word; wider gaps are a space. */
const SPACE_GAP = 0.15;
/** A gap wider than this (in font sizes) ends a run: the columns of the amount section, receipt beside payment part. */
const COLUMN_GAP = 1.5;
/** Characters whose vertical centres are within this (in font sizes) share a line. */
const SAME_LINE = 0.45;

/**
 * Groups a text layer's characters into runs: by line (vertical centre), then by horizontal gaps. The engine's own
 * text order and spaces are not trusted: PDF producers write text in any order, and PDFium's spaces and line ends are
 * guesses; the boxes are what the reader of the paper sees.
 */
export function textRuns(chars: readonly PageChar[], page: { width: number; height: number }): TextRun[] {
  const glyphs = chars
    .filter((c) => c.char.trim() !== '' && c.size > 0)
    .map((c) => ({
      char: c.char,
      left: c.box.x * page.width,
      right: (c.box.x + c.box.w) * page.width,
      y: (c.box.y + c.box.h / 2) * page.height,
      size: c.size,
    }))
    .sort((a, b) => a.y - b.y);
  const lines: (typeof glyphs)[] = [];
  for (const glyph of glyphs) {
    // Glyph boxes are tight (an "a" sits lower than a "C"): a line is matched by its first glyph's centre.
    const line = lines.find((l) => Math.abs(l[0]!.y - glyph.y) < SAME_LINE * Math.max(l[0]!.size, glyph.size));
    if (line) line.push(glyph);
    else lines.push([glyph]);
  }
  const runs: TextRun[] = [];
  for (const line of lines) {
    line.sort((a, b) => a.left - b.left);
    let run: TextRun | undefined;
    for (const g of line) {
      const gap = run ? g.left - run.right : Infinity;
      if (run && gap <= COLUMN_GAP * g.size) {
        run.text += (gap > SPACE_GAP * g.size ? ' ' : '') + g.char;
        run.right = Math.max(run.right, g.right);
      } else {
        run = { text: g.char, left: g.left, right: g.right, y: line[0]!.y, size: g.size };
        runs.push(run);
      }
    }
  }
  return runs.sort((a, b) => a.y - b.y || a.left - b.left);
}
