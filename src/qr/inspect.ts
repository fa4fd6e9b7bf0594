import type { LastPage, PageBox } from '../pdf/engine/port.ts';
import type { QrBill } from './bill.ts';
import { checkPrinted } from './printed/check.ts';
import type { RasterPoint } from './reader.ts';
import { symbolWarnings } from './symbol.ts';
import type { QrBillWarning } from './warnings.ts';

/** The code that was answered, as the scan saw it on the page. */
export interface AnsweredCode {
  bill: QrBill;
  /** Its box and corners as fractions of the page. */
  box: PageBox;
  corners: { topLeft: RasterPoint; topRight: RasterPoint; bottomLeft: RasterPoint };
  ecLevel: string;
  swissCross: boolean | undefined;
}

/**
 * What the page says about the answered bill beyond its text, while the page is open: the printed receipt and payment
 * part against the code (unless `printed` is false), then the symbol's own facts.
 */
export function inspectAnswered(
  page: LastPage,
  code: AnsweredCode,
  { printed }: { printed: boolean },
): QrBillWarning[] {
  const { width, height } = page.contents();
  const mm = (a: RasterPoint, b: RasterPoint) => (Math.hypot((b.x - a.x) * width, (b.y - a.y) * height) * 25.4) / 72;
  const { topLeft, topRight, bottomLeft } = code.corners;
  const sideMm = (mm(topLeft, topRight) + mm(topLeft, bottomLeft)) / 2;
  const check = printed ? checkPrinted(page, { width, height }, code.bill, code.box) : undefined;
  return [
    ...(check?.warnings ?? []),
    ...symbolWarnings({ ecLevel: code.ecLevel, swissCross: code.swissCross, sideMm }, check?.textLayer ?? false),
  ];
}
