import type { BodyForm } from './request-body.ts';

/**
 * Each document operation takes three body forms (docs/contract/http.md, "Other request bodies"). The OpenAPI document describes
 * each form as its own operation on its own path, because client generators make one method of one operation: NSwag
 * merges the forms of one request body into one C# method (a `references` query parameter and a `references` form
 * field become a duplicate parameter, CS0100), Kiota keeps only one of them, openapi-typescript types a union. With
 * one form an operation, each generator writes one plain call per form (docs/decisions/openapi-shape.md).
 *
 * The operation's own path keeps taking all three forms, as it always has, for curl and hand-written clients; `/file`
 * and `/form` below it take only theirs.
 */
export const FORM_PATH_SUFFIX = { file: '/file', multipart: '/form' } as const;

/** The paths an operation answers on, each with the forms it takes. */
export function documentPaths(path: string): { path: string; forms: readonly BodyForm[] }[] {
  return [
    { path, forms: ['json', 'file', 'multipart'] },
    { path: path + FORM_PATH_SUFFIX.file, forms: ['file'] },
    { path: path + FORM_PATH_SUFFIX.multipart, forms: ['multipart'] },
  ];
}
