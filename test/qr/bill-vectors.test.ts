/**
 * readQrBill on the shared corpus (../shared, skipped where it is absent): Codecrete's test vectors, and the payloads
 * of the generated and external QR corpus manifests.
 */
import { expect, it } from 'vitest';
import { type QrBill, type QrBillRejection, readQrBill } from '../../src/qr/bill.ts';
import { describeShared, readSharedJson } from '../support/corpus.ts';
import { BILL_KEYS, bill, REASONS, reason } from '../support/qr/qr-payload.ts';

interface CodecreteVectors {
  valid: { name: string; lines: string[]; text_lf: string }[];
  invalid: { name: string; text: string; codecreteError: string }[];
  tolerated_by_codecrete_decoder: { name: string; text: string }[];
}

/**
 * Codecrete's error key → our reason. Codecrete counts lines before it looks at the header; we check SPC, then the
 * header, then the count (so a code of another version is named as such), so its one structure key
 * `data_structure_invalid/qrText` splits by the first of our rules the text breaks; those vectors are listed by name.
 */
const CODECRETE_REASON: Record<string, QrBillRejection> = {
  'version_unsupported/version': 'bad-header',
  'coding_type_unsupported/codingType': 'bad-header',
  'number_invalid/amount': 'amount',
  'data_structure_invalid/trailer': 'no-trailer',
};
const CODECRETE_QR_TEXT_REASON: Record<string, QrBillRejection> = {
  garbage: 'not-spc',
  // Five lines and version 0100: Codecrete stops at the count, we at the version.
  'too few lines, v0100': 'bad-header',
};

describeShared('readQrBill: Codecrete test vectors', () => {
  const vectors = readSharedJson<CodecreteVectors>('corpus/qr/external/manuelbl-java/test-vectors.json');

  for (const v of vectors.valid) {
    it(`reads valid ${v.name}`, () => {
      const b = bill(v.text_lf);
      const line = (n: number) => v.lines[n - 1]!;
      expect(b).toMatchObject({
        version: line(2),
        iban: line(4),
        currency: line(20),
        referenceType: line(28),
        reference: line(29) || null,
        unstructuredMessage: line(30) || null,
        billInformation: v.lines[31] ?? null,
      });
      expect(b.amount).toBe(line(19) === '' ? null : Number(line(19)));
      expect(b.creditor.name).toBe(line(6));
      expect(b.ultimateDebtor?.name ?? null).toBe(line(22) || null);
      expect(b.ultimateDebtor?.addressType ?? null).toBe(line(21) || null);
      const alternatives = v.lines.slice(32);
      expect(b.alternativeProcedureParameters).toBe(alternatives.length ? alternatives.join('\n') : null);
    });
  }

  for (const v of vectors.invalid) {
    it(`rejects invalid "${v.name}" (${v.codecreteError})`, () => {
      const expected =
        v.codecreteError === 'data_structure_invalid/qrText'
          ? CODECRETE_QR_TEXT_REASON[v.name]
          : CODECRETE_REASON[v.codecreteError];
      expect(expected, `no reason mapped for ${v.name} (${v.codecreteError})`).toBeDefined();
      expect(reason(v.text)).toBe(expected);
    });
  }

  for (const v of vectors.tolerated_by_codecrete_decoder) {
    const unknownType = v.name.startsWith('unknown reference type');
    it(`${unknownType ? 'rejects' : 'reads'} tolerated "${v.name}"`, () => {
      if (unknownType) {
        expect(reason(v.text)).toBe('reference-kind');
      } else {
        const b = bill(v.text);
        expect(b).toMatchObject({
          iban: 'CH5800791123000889012',
          amount: 3949.75,
          referenceType: 'NON',
          unstructuredMessage: 'Bill no. 3139 for gardening work and disposal of waste material',
        });
      }
    });
  }
});

interface GeneratedEntry {
  file: string;
  expectedStatus: number;
  expectedPayload?: string | null;
  /** Entry 13 keeps its payload here: it decodes fine but must be refused. */
  payload?: string | null;
  qrCodeData?: QrBill;
}

/** Why each 404 entry with a payload is refused (the others have no QR-bill text at all). */
const GENERATED_REJECTIONS: Record<string, QrBillRejection> = {
  'generated/13_custom_bad_qrr_checkdigit.pdf': 'qrr-check-digit',
};

describeShared('readQrBill: generated QR corpus manifest', () => {
  const manifest = readSharedJson<{ files: GeneratedEntry[] }>('corpus/qr/manifest.json');

  for (const entry of manifest.files) {
    const text = entry.expectedPayload ?? entry.payload ?? null;
    if (text === null) {
      it.skip(`${entry.file} (no payload)`, () => {});
      continue;
    }
    if (entry.expectedStatus === 200 && entry.qrCodeData) {
      const expected = entry.qrCodeData;
      it(`${entry.file} reads as its qrCodeData`, () => {
        const b = bill(text);
        expect(b).toEqual(expected);
        // The response is serialized from the bill: same keys in the same order as the expected JSON.
        expect(JSON.stringify(b)).toBe(JSON.stringify(expected));
      });
    } else if (entry.expectedStatus === 404) {
      it(`${entry.file} is rejected`, () => {
        expect(GENERATED_REJECTIONS[entry.file], `no reason pinned for ${entry.file}`).toBeDefined();
        expect(reason(text)).toBe(GENERATED_REJECTIONS[entry.file]);
      });
    }
  }
});

interface ExternalEntry {
  file: string;
  decodedPayload?: string | null;
  decodedPayloads?: string[] | null;
}

/** External payloads this reader refuses, with the reason: none so far (every sprain QRR has a valid check digit). */
const EXTERNAL_REJECTIONS: Record<string, QrBillRejection> = {};

describeShared('readQrBill: external QR corpus manifest', () => {
  const manifest = readSharedJson<{ files: ExternalEntry[] }>('corpus/qr/external-manifest.json');
  const payloads = manifest.files.flatMap((entry) =>
    [entry.decodedPayload, ...(entry.decodedPayloads ?? [])]
      .filter((p): p is string => typeof p === 'string' && p.startsWith('SPC'))
      .map((text, i, all) => ({ name: all.length > 1 ? `${entry.file} #${i + 1}` : entry.file, text })),
  );

  it('has SPC payloads to read', () => {
    expect(payloads.length).toBeGreaterThan(50);
  });

  for (const { name, text } of payloads) {
    it(`${name} reads as a bill or a reasoned rejection`, () => {
      // A throw fails the test; a rejection must carry one of the known reasons and be the one pinned above.
      const reading = readQrBill(text);
      if (reading.ok) {
        expect(Object.keys(reading.bill)).toEqual(BILL_KEYS);
        expect(EXTERNAL_REJECTIONS[name]).toBeUndefined();
      } else {
        expect(REASONS).toContain(reading.reason);
        expect(reading.reason).toBe(EXTERNAL_REJECTIONS[name]);
      }
    });
  }
});
