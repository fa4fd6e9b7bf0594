import type { TextRun } from './lines.ts';

/**
 * The headings of the receipt and payment part (SIX IG QR-bill 2.3, 3.4 and 3.5) in the four languages the IG allows
 * (German, French, Italian, English), and in Romansh, which swissqrbill and Codecrete also print, each list in that
 * order. Matched without regard to case and spacing.
 */
const HEADINGS = {
  account: [
    'Konto / Zahlbar an',
    'Compte / Payable à',
    'Conto / Pagabile a',
    'Account / Payable to',
    'Conto / Da pajar a',
  ],
  reference: ['Referenz', 'Référence', 'Riferimento', 'Reference', 'Referenza'],
  additional: [
    'Zusätzliche Informationen',
    'Informations supplémentaires',
    'Informazioni supplementari',
    'Additional information',
    'Infurmaziuns supplementaras',
  ],
  /** The debtor's name and address are printed under it. */
  payableBy: ['Zahlbar durch', 'Payable par', 'Pagabile da', 'Payable by', 'Da pajar da'],
  /** A blank box for the debtor to fill in by hand: the code has no debtor. */
  payableByBlank: [
    'Zahlbar durch (Name/Adresse)',
    'Payable par (nom/adresse)',
    'Pagabile da (nome/indirizzo)',
    'Payable by (name/address)',
    'Da pajar da (num/adressa)',
  ],
  currency: ['Währung', 'Monnaie', 'Valuta', 'Currency', 'Valuta'],
  amount: ['Betrag', 'Montant', 'Importo', 'Amount', 'Import'],
  /** Headings that end the section above them and hold nothing compared here. */
  other: [
    'Empfangsschein',
    'Récépissé',
    'Ricevuta',
    'Receipt',
    'Zahlteil',
    'Section paiement',
    'Sezione pagamento',
    'Payment part',
    'Annahmestelle',
    'Point de dépôt',
    'Punto di accettazione',
    'Acceptance point',
    'Zugunsten',
    'En faveur de',
    'A favore di',
    'In favour of',
    'Quittanza',
    'Part da pajament',
    'Post da recepziun',
    'A favur da',
    'Vor der Einzahlung abzutrennen',
    'A détacher avant le versement',
    'Da staccare prima del versamento',
    'Separate before paying in',
  ],
} as const;

type Heading = keyof typeof HEADINGS;

/** Lower case, one form of each accented letter, no spaces: "Konto/Zahlbar an" and "Konto / Zahlbar an" are one. */
const key = (text: string): string => text.normalize('NFC').toLowerCase().replace(/\s+/g, '');

const BY_KEY = new Map<string, Heading>([
  ...(Object.entries(HEADINGS) as [Heading, readonly string[]][]).flatMap(([heading, texts]) =>
    texts.map((t): [string, Heading] => [key(t), heading]),
  ),
  // Currency and amount so close together that they read as one run ("Currency Amount" in a narrow receipt).
  ...HEADINGS.currency.map((c, i): [string, Heading] => [key(`${c}${HEADINGS.amount[i]}`), 'currency']),
]);

/** What one column of a bill prints: its sections' lines under their headings. */
export interface PrintedSections {
  /** Lines under "Account / Payable to": the account, then the creditor's name and address. */
  account?: string[];
  reference?: string[];
  /** Lines under "Payable by"; `blank` where the box for a handwritten debtor is printed instead. */
  debtor?: string[] | 'blank';
  /** The currency and amount under their headings; amount `''` where the amount is left blank (a box). */
  currency?: string;
  amount?: string;
}

/**
 * Reads one column of a receipt or payment part: runs sorted top to bottom, a heading opening a section that runs to
 * the next heading. Currency and amount are printed side by side, each under its heading, on the line below.
 */
export function readSections(runs: readonly TextRun[]): PrintedSections {
  const sections: PrintedSections = {};
  const lines = byLine(runs);
  let open: string[] | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heading = BY_KEY.get(key(line[0]!.text));
    if (heading === 'currency' || heading === 'amount') {
      if (readAmountLine(line, lines[i + 1], sections)) i++; // the values' line, read with its headings
      open = undefined;
      continue;
    }
    if (heading !== undefined) {
      open = [];
      if (heading === 'account') sections.account ??= open;
      else if (heading === 'reference') sections.reference ??= open;
      else if (heading === 'payableBy') sections.debtor ??= open;
      else if (heading === 'payableByBlank') sections.debtor ??= 'blank';
      // A heading's own line holds nothing else; any run beside it belongs to another column.
      continue;
    }
    open?.push(line.map((r) => r.text).join(' '));
  }
  return sections;
}

/**
 * The currency and amount headings' line and the line below it: the currency first, the amount after it (absent where
 * the amount is left blank). Says whether the line below held the values.
 */
function readAmountLine(headings: TextRun[], values: TextRun[] | undefined, into: PrintedSections): boolean {
  // The values sit within about two lines of the headings; further down is something else (below a blank amount box).
  const below = values && values[0]!.y - headings[0]!.y < 3.5 * headings[0]!.size ? values : [];
  const text = below.map((r) => r.text).join(' ');
  const currency = /^[A-Z]{3}\b/.exec(text)?.[0];
  into.currency ??= currency ?? '';
  into.amount ??= (currency ? text.slice(currency.length) : text).trim();
  return below.length > 0;
}

/** Runs grouped into lines (runs are sorted by line, then left to right). */
function byLine(runs: readonly TextRun[]): TextRun[][] {
  const lines: TextRun[][] = [];
  for (const run of runs) {
    const last = lines[lines.length - 1];
    if (last && Math.abs(last[0]!.y - run.y) < 0.45 * run.size) last.push(run);
    else lines.push([run]);
  }
  return lines;
}
