import type { LastPage, PageBox } from '../../pdf/engine/port.ts';
import type { QrBill } from '../bill.ts';
import type { QrBillWarning } from '../warnings.ts';
import { type Difference, differences, type PrintedField } from './compare.ts';
import { type PrintedSections, readSections } from './headings.ts';
import { type TextRun, textRuns } from './lines.ts';

const MM = 72 / 25.4;

/**
 * Where the receipt and payment part lie around the code (SIX IG QR-bill 2.3, 3.1): the code's top left corner is
 * 67 mm from the bill's left edge and 17 mm from its top; the bill is 210 x 105 mm. With some slack for producers that
 * place it a few millimetres off.
 */
const BILL = { left: 70, right: 146, above: 20, below: 92 } as const;
/** Between the receipt (62 mm wide) and the code, and between the code and the payment part's text column. */
const COLUMN_SLACK = 3;

/** What the printed check found: its warnings, and whether the bill's area had a text layer at all. */
export interface PrintedCheck {
  warnings: QrBillWarning[];
  textLayer: boolean;
}

/**
 * Reads the receipt and payment part printed around the code from the page's text layer and compares them with the
 * code (`printed-differs`); where there is nothing to read (a scan, a photo, a payment part drawn as an image or as
 * outlines) it says the check did not run (`printed-not-checked`). `code` is the code's box on the page, whose size in points is given.
 */
export function checkPrinted(
  page: LastPage,
  { width, height }: { width: number; height: number },
  bill: QrBill,
  code: PageBox,
): PrintedCheck {
  const [left, top] = [code.x * width, code.y * height];
  const right = left + code.w * width;
  const area: PageBox = {
    x: (left - BILL.left * MM) / width,
    y: (top - BILL.above * MM) / height,
    w: ((BILL.left + BILL.right) * MM) / width,
    h: ((BILL.above + BILL.below) * MM) / height,
  };
  const runs = textRuns(page.text(area), { width, height });
  const receipt = readSections(runs.filter((r) => r.left < left - COLUMN_SLACK * MM));
  const paymentPart = merged(
    readSections(runs.filter((r) => r.left >= left - COLUMN_SLACK * MM && r.left < right + COLUMN_SLACK * MM)),
    readSections(runs.filter((r) => r.left >= right + COLUMN_SLACK * MM)),
  );
  const parts = [
    { name: 'payment part', sections: paymentPart },
    { name: 'receipt', sections: receipt },
  ].filter((p) => p.sections.account !== undefined);
  if (parts.length === 0) return { warnings: [notChecked(runs)], textLayer: runs.length > 0 };
  const found = parts.flatMap((p) =>
    differences(p.sections, bill, { receipt: p.name === 'receipt' }).map((d) => ({ ...d, where: p.name })),
  );
  return { warnings: found.length > 0 ? [differs(found)] : [], textLayer: true };
}

/** The payment part's two columns: the amount section under the code, the text column beside it. */
function merged(under: PrintedSections, beside: PrintedSections): PrintedSections {
  return { ...under, ...beside, currency: under.currency ?? beside.currency, amount: under.amount ?? beside.amount };
}

function notChecked(runs: readonly TextRun[]): QrBillWarning {
  return {
    code: 'printed-not-checked',
    fields: [],
    detail:
      runs.length === 0
        ? 'The payment part has no text layer (a scan, a photo, or text drawn as outlines): its printed account, creditor, reference and amount were not compared with the code.'
        : 'No "Account / Payable to" heading was found in the text beside the code: the printed payment part was not compared with the code.',
  };
}

const FIELD_ORDER: readonly PrintedField[] = ['account', 'creditor', 'reference', 'currency', 'amount', 'debtor'];

/** One warning for all differences: each field once, with what each part prints and what the code says. */
function differs(found: (Difference & { where: string })[]): QrBillWarning {
  const fields = FIELD_ORDER.filter((f) => found.some((d) => d.field === f));
  const sentences = fields.flatMap((field) => {
    // The receipt usually prints what the payment part prints: one sentence for both when so.
    const seen = new Map<string, { where: string[]; code: string }>();
    for (const d of found.filter((d) => d.field === field)) {
      const entry = seen.get(d.printed) ?? { where: [], code: d.code };
      entry.where.push(d.where);
      seen.set(d.printed, entry);
    }
    return [...seen].map(
      ([printed, { where, code }]) =>
        `${field}: the ${where.join(' and ')} print${where.length === 1 ? 's' : ''} "${printed}", the code says "${code}".`,
    );
  });
  return {
    code: 'printed-differs',
    fields,
    detail: `The printed bill differs from its QR code, which is what a bank pays: ${sentences.join(' ')}`,
  };
}
