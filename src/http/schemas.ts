import { z } from '@hono/zod-openapi';
import { JsonWithText, RawJsonString } from './json-object.ts';

/** The wire shapes of docs/contract/http.md. These schemas validate requests and generate /openapi.json alike. */

/** Read from the body's bytes without becoming a JavaScript string (json-object.ts); documented as the string it is. */
export const Base64Pdf = z.instanceof(RawJsonString).openapi({
  type: 'string',
  description:
    'The PDF as standard Base64 (RFC 4648 §4, padded; line breaks allowed; an optional `data:application/pdf;base64,` prefix).',
  format: 'byte',
  example: 'JVBERi0xLjcK...',
});

export const ValidatePdfRequest = z.object({ base64Pdf: Base64Pdf }).openapi('ValidatePdfRequest', {
  description: 'Property names bind case-insensitively (`Base64Pdf` is accepted).',
});

export const ValidatePdfResponse = z
  .object({
    pageCount: z.number().int().min(1).openapi({ example: 1 }),
    fileSizeBytes: z.number().int().min(0).openapi({ example: 1319 }),
    fileSizeMB: z.number().openapi({ description: 'fileSizeBytes / 1048576, two decimals, ties to even.', example: 0 }),
    pdfVersion: z
      .string()
      .openapi({ description: 'The later of the header version and the catalog /Version.', example: '1.7' }),
    hasAttachments: z.boolean(),
    attachmentCount: z
      .number()
      .int()
      .min(0)
      .openapi({ description: 'Distinct file specifications in the /EmbeddedFiles name tree.' }),
  })
  .openapi('ValidatePdfResponse');

export const ProblemDetails = z
  .object({
    type: z.string().openapi({
      description: 'Stable URI; clients branch on its last segment.',
      example: 'https://errors.example/problems/invalid-pdf',
    }),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    traceId: z.string(),
    errors: z
      .record(z.string(), z.array(z.string()))
      .optional()
      .openapi({ description: 'For `validation`: messages per offending field.' }),
    rejected: z
      .array(z.object({ index: z.number().int(), reason: z.string() }))
      .optional()
      .openapi({
        description:
          'For `qr-code-not-found`: each QR code on the last page in reading order and why it is not a valid QR-bill (empty: none).',
      }),
  })
  .openapi('ProblemDetails');

export const problemContent = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemDetails } },
});

export const AddressData = z
  .object({
    addressType: z
      .enum(['S', 'K'])
      .openapi({ description: 'S: structured (street, number, postal code, city); K: combined (two address lines).' }),
    name: z.string().nullable(),
    street: z.string().nullable(),
    buildingNumber: z.string().nullable(),
    addressLine1: z.string().nullable(),
    addressLine2: z.string().nullable(),
    postalCode: z.string().nullable(),
    city: z.string().nullable(),
    country: z.string().nullable(),
  })
  .openapi('AddressDataDto');

function nullableAddress() {
  return z.union([AddressData, z.null()]).openapi({}, { unionPreferredType: 'oneOf' });
}

export const SwissQrCodeData = z
  .object({
    qrType: z.string().openapi({ example: 'SPC' }),
    version: z.string().openapi({ example: '0200' }),
    codingType: z.string().openapi({ example: '1' }),
    iban: z.string().openapi({ description: 'Spaces removed.', example: 'CH4431999123000889012' }),
    creditor: AddressData,
    // A union, not .nullable(): that would emit allOf [$ref, {type: [object, null]}], which rejects null in strict clients.
    // As oneOf [$ref, null], not anyOf: NSwag reads only the oneOf form as a nullable reference (anyOf made it a class
    // of its own whose deserializer refused null); Kiota and openapi-typescript read both.
    ultimateCreditor: nullableAddress(),
    amount: z
      .number()
      .nullable()
      .openapi({ description: 'null when the bill leaves the amount open.', example: 1949.75 }),
    currency: z.string().openapi({ example: 'CHF' }),
    ultimateDebtor: nullableAddress(),
    referenceType: z.string().openapi({ example: 'QRR' }),
    reference: z
      .string()
      .nullable()
      .openapi({ description: 'Spaces removed.', example: '210000000003139471430009017' }),
    unstructuredMessage: z.string().nullable(),
    billInformation: z.string().nullable(),
    alternativeProcedureParameters: z
      .string()
      .nullable()
      .openapi({ description: 'The alternative-procedure lines joined by \\n.' }),
  })
  .openapi('SwissQrCodeDataDto');

/** The request's references as sent: JSON values of any kind, echoed byte for byte. */
export const References = z
  .instanceof(JsonWithText)
  .refine((references) => Array.isArray(references.value), 'The references field must be an array.')
  .openapi({
    type: 'array',
    items: {},
    description: 'Any JSON values (strings, numbers, objects); returned exactly as sent. May be empty.',
    example: ['INV-2026-0042'],
  });

export const ExtractSwissQrCodeRequest = z
  .object({ references: References, base64Pdf: Base64Pdf })
  .openapi('ExtractSwissQrCodeRequest', {
    description: 'Property names bind case-insensitively.',
  });

export const QrBillWarning = z
  .object({
    code: z.string().openapi({
      description:
        'Stable code to branch on (ignore codes you do not know): `combined-address` (a K address, not accepted by banks since 2025-11-22), ' +
        '`extended-character-set` (characters IG 2.3 allows and IG 2.2 did not), `unsupported-character` (outside the IG 2.3 set), ' +
        '`version-02xx` (a version other than 0200), ' +
        '`printed-differs` (the printed receipt or payment part shows another account, creditor, reference, currency, amount or debtor than the code: `fields` names them, `detail` gives both values; check before paying), ' +
        '`printed-not-checked` (the payment part has no text layer, e.g. a scan or photo: the printed part was not compared), ' +
        '`error-correction-level` (not M), `no-swiss-cross` (no Swiss cross in the code), `symbol-size` (far from 46 x 46 mm on a page with a text layer).',
      example: 'combined-address',
    }),
    fields: z.array(z.string()).openapi({
      description:
        "Where: field names of qrCodeData, dotted inside addresses; for `printed-differs` the printed fields (`account`, `creditor`, `reference`, `currency`, `amount`, `debtor`); empty for the symbol's own facts.",
      example: ['creditor'],
    }),
    detail: z.string().openapi({ description: 'One sentence for a person.' }),
  })
  .openapi('QrBillWarning');

export const ExtractSwissQrCodeResponse = z
  .object({
    references: z.array(z.unknown()),
    qrCodeData: SwissQrCodeData,
    warnings: z.array(QrBillWarning).openapi({
      description:
        'What the bill may still need attention for under SIX IG QR-bill 2.3 (in force since 2025-11-22); empty when nothing. The bill is valid either way.',
    }),
  })
  .openapi('ExtractSwissQrCodeResponse');
