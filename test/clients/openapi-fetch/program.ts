/**
 * Calls the service through openapi-fetch typed by the paths openapi-typescript generated from /openapi.json
 * (./schema.ts beside this file in the generated copy; test/support/peers/generated-clients.ts type-checks the two with
 * `tsc --strict` before running this). One typed call per path, so one per body form. Prints JSON-line checks as the
 * .NET clients do (test/wcf-shared/Report.cs).
 * Usage: tsx program.ts <base URL> <base URL of a service that requires keys> <key> <folder with bill.pdf, plain.pdf, bill.jpg>
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import createClient from 'openapi-fetch';
import type { components, paths } from './schema.ts';

type ProblemDetails = components['schemas']['ProblemDetails'];

const [base, lockedBase, key, folder] = process.argv.slice(2) as [string, string, string, string];
const read = (name: string) => readFileSync(join(folder, name));
const blob = (name: string, type: string) => new Blob([read(name)], { type });
let failed = 0;
let passed = 0;
const check = (name: string, expected: unknown, actual: unknown) => {
  const ok = JSON.stringify(expected) === JSON.stringify(actual);
  if (ok) passed++;
  else failed++;
  const line = ok
    ? { check: name, ok }
    : { check: name, ok, expected: JSON.stringify(expected), actual: JSON.stringify(actual) };
  console.log(JSON.stringify(line));
};
/** The file itself as the body: openapi-fetch would write it as JSON otherwise. */
const asIs = (body: unknown) => body as BodyInit;
const asForm = (fields: Record<string, string | Blob>) => {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return form;
};

const started = Date.now();
try {
  const client = createClient<paths>({ baseUrl: base });
  const validated = await client.POST('/api/v1/documents/validate', {
    body: { base64Pdf: read('bill.pdf').toString('base64') },
  });
  check('validate.json.pages', 1, validated.data?.pageCount);
  const fromFile = await client.POST('/api/v1/documents/validate/file', {
    body: blob('plain.pdf', 'application/pdf'),
    bodySerializer: asIs,
    headers: { 'Content-Type': 'application/pdf' },
  });
  check('validate.file.pages', 2, fromFile.data?.pageCount);
  const fromForm = await client.POST('/api/v1/documents/validate/form', {
    body: { file: blob('plain.pdf', 'application/pdf') },
    bodySerializer: asForm,
  });
  check('validate.form.pages', 2, fromForm.data?.pageCount);

  // References of mixed types: a string, a number, an object with a boolean and a null.
  const references = ['INV-2026-0042', 17, { k: [true, null] }];
  const extracted = await client.POST('/api/v1/documents/extract-swiss-qr-code', {
    body: { references, base64Pdf: read('bill.pdf').toString('base64') },
  });
  check('extract.json.iban', 'CH4431999123000889012', extracted.data?.qrCodeData.iban);
  check('extract.json.references', references, extracted.data?.references);
  const photo = await client.POST('/api/v1/documents/extract-swiss-qr-code/file', {
    params: { query: { references: '["INV-7",7]' } },
    body: blob('bill.jpg', 'image/jpeg'),
    bodySerializer: asIs,
    headers: { 'Content-Type': 'image/jpeg' },
  });
  check('extract.file.jpeg.iban', 'CH4431999123000889012', photo.data?.qrCodeData.iban);
  check('extract.file.jpeg.references', ['INV-7', 7], photo.data?.references);
  const form = await client.POST('/api/v1/documents/extract-swiss-qr-code/form', {
    body: { file: blob('bill.pdf', 'application/pdf'), references: '["INV-7",7]' },
    bodySerializer: asForm,
  });
  check('extract.form.iban', 'CH4431999123000889012', form.data?.qrCodeData.iban);

  // 404: `error` is typed as the operation's ProblemDetails.
  const missing = await client.POST('/api/v1/documents/extract-swiss-qr-code/file', {
    body: blob('plain.pdf', 'application/pdf'),
    bodySerializer: asIs,
    headers: { 'Content-Type': 'application/pdf' },
  });
  const notFound: ProblemDetails | undefined = missing.error;
  check('not-found.status', 404, missing.response.status);
  check('not-found.problem-status', 404, notFound?.status);
  check('not-found.type', true, notFound?.type.endsWith('/qr-code-not-found'));
  check('not-found.rejected', true, Array.isArray(notFound?.rejected));

  // 401 without a key where keys are required; with the key, the call goes through.
  const locked = createClient<paths>({ baseUrl: lockedBase });
  const body = { base64Pdf: read('bill.pdf').toString('base64') };
  const refused = await locked.POST('/api/v1/documents/validate', { body });
  check('unauthorized.status', 401, refused.response.status);
  check('unauthorized.type', true, refused.error?.type.endsWith('/unauthorized'));
  const keyed = createClient<paths>({ baseUrl: lockedBase, headers: { 'X-Api-Key': key } });
  check('authorized.pages', 1, (await keyed.POST('/api/v1/documents/validate', { body })).data?.pageCount);
} catch (e) {
  failed++;
  console.log(JSON.stringify({ check: 'http', ok: false, error: String(e) }));
}
console.log(JSON.stringify({ summary: true, passed, failed, ms: Date.now() - started }));
process.exitCode = failed === 0 ? 0 : 1;
