import type { WrappedPdfiumModule } from '@embedpdf/pdfium';
import { boxAround, type PageBox, type PageChar } from './port.ts';

/**
 * The characters of an open page's text layer (PDFium's FPDFText API) whose centre lies in `region`, in PDFium's text
 * order; `toContent` maps PDF user space to fractions of the page in content orientation.
 */
export function pageText(
  m: WrappedPdfiumModule,
  page: number,
  region: PageBox,
  toContent: (x: number, y: number) => { x: number; y: number },
): PageChar[] {
  const textPage = m.FPDFText_LoadPage(page);
  if (!textPage) return [];
  const out = m.pdfium.wasmExports.malloc(16); // FS_RECTF: left, top, right, bottom
  const chars: PageChar[] = [];
  try {
    const count = m.FPDFText_CountChars(textPage);
    for (let i = 0; i < count; i++) {
      // Spaces and line ends PDFium made up from gaps: the reader of the text makes its own from the boxes.
      if (m.FPDFText_IsGenerated(textPage, i) === 1) continue;
      const code = m.FPDFText_GetUnicode(textPage, i);
      // The loose box: the glyph's advance and the font's ascent to descent, as a typesetter places it. Tight glyph
      // boxes would put an "o" lower than an "R" and leave gaps inside words.
      if (code === 0 || !m.FPDFText_GetLooseCharBox(textPage, i, out)) continue;
      const [left, top, right, bottom] = [0, 4, 8, 12].map((o) => m.pdfium.getValue(out + o, 'float')) as [
        number,
        number,
        number,
        number,
      ];
      const box = boxAround([toContent(left, top), toContent(right, bottom)]);
      const [cx, cy] = [box.x + box.w / 2, box.y + box.h / 2];
      if (cx < region.x || cx > region.x + region.w || cy < region.y || cy > region.y + region.h) continue;
      // A character the font maps to no Unicode (or to a control character) is shown as such, never guessed.
      const unmapped = code < 0x20 || m.FPDFText_HasUnicodeMapError(textPage, i) === 1;
      const char = unmapped ? '\uFFFD' : String.fromCodePoint(code);
      chars.push({ char, box, size: m.FPDFText_GetFontSize(textPage, i) });
    }
  } finally {
    m.pdfium.wasmExports.free(out);
    m.FPDFText_ClosePage(textPage);
  }
  return chars;
}
