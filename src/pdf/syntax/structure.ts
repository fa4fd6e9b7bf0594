import { PdfDocument, type ReadLimits } from './document.ts';
import { PdfName, PdfRef, PdfSyntaxError, isDict, isName, type PdfDict, type PdfValue } from './objects.ts';

/** The facts `validate` reports, read from the file's own structure. */
export interface PdfStructure {
  pageCount: number;
  /** The catalog's /Version, when it names a version this service knows. */
  catalogVersion: string | undefined;
  attachmentCount: number;
  repaired: boolean;
}

/** PDF versions that exist (ISO 32000-2 and its predecessors). */
export const KNOWN_VERSIONS = ['1.0', '1.1', '1.2', '1.3', '1.4', '1.5', '1.6', '1.7', '2.0'];

const HEADER_WINDOW = 1024;

/** Finds `%PDF-d.d` in the first 1024 bytes (ISO 32000-2 §7.5.2 and Annex H's tolerance for leading bytes). */
export function findHeader(bytes: Uint8Array): { offset: number; version: string } | undefined {
  const end = Math.min(bytes.length, HEADER_WINDOW);
  for (let i = bytes.indexOf(0x25); i >= 0 && i + 8 <= end; i = bytes.indexOf(0x25, i + 1)) {
    if (bytes[i + 1] !== 0x50 || bytes[i + 2] !== 0x44 || bytes[i + 3] !== 0x46 || bytes[i + 4] !== 0x2d) continue;
    const [major, dot, minor, after] = [bytes[i + 5]!, bytes[i + 6]!, bytes[i + 7]!, bytes[i + 8]];
    const digit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
    if (!digit(major) || dot !== 0x2e || !digit(minor) || digit(after)) return undefined;
    return { offset: i, version: `${major - 0x30}.${minor - 0x30}` };
  }
  return undefined;
}

/** Leaf count above which the tree is refused: PDFium's own page limit. */
const MAX_PAGES = 1 << 20;

/**
 * Reads page count, catalog version and attachments from the file's objects.
 * Throws PdfSyntaxError: `invalid` for a verdict on the file, `unsupported` when only the engine can tell.
 */
export function readStructure(bytes: Uint8Array, headerOffset: number, limits: ReadLimits): PdfStructure {
  const doc = new PdfDocument(bytes, headerOffset, limits);
  const catalog = doc.resolveDict(doc.trailer.get('Root'));
  if (!catalog) {
    if (doc.encrypted) throw new PdfSyntaxError('unsupported', 'catalog not readable without decryption');
    throw new PdfSyntaxError('invalid', 'no document catalog');
  }
  const version = catalog.get('Version');
  return {
    pageCount: countPages(doc, catalog.get('Pages'), limits),
    catalogVersion: version instanceof PdfName && KNOWN_VERSIONS.includes(version.value) ? version.value : undefined,
    attachmentCount: countEmbeddedFiles(doc, catalog, limits),
    repaired: doc.repaired,
  };
}

/**
 * Walks the page tree depth first and counts leaves. /Count is not trusted (it can lie either way); a node met twice
 * is a cycle and makes the file invalid, as does a negative /Count at the root, which no reader can make sense of.
 */
function countPages(doc: PdfDocument, pagesRef: PdfValue | undefined, limits: ReadLimits): number {
  const root = doc.resolveDict(pagesRef);
  if (!root) throw new PdfSyntaxError('invalid', 'no page tree');
  const rootCount = root.get('Count');
  if (typeof rootCount === 'number' && rootCount < 0) throw new PdfSyntaxError('invalid', 'negative page count');
  const visited = new Set<string>();
  if (pagesRef instanceof PdfRef) visited.add(pagesRef.key);
  let pages = 0;
  const stack: PdfValue[][] = [[root]];
  while (stack.length > 0) {
    const kids = stack[stack.length - 1]!;
    const next = kids.shift();
    if (next === undefined) {
      stack.pop();
      continue;
    }
    limits.checkpoint();
    if (next instanceof PdfRef && next !== pagesRef) {
      if (visited.has(next.key)) throw new PdfSyntaxError('invalid', 'cycle in the page tree');
      visited.add(next.key);
    }
    const node = doc.resolveDict(next);
    if (!node) continue;
    const childKids = node.get('Kids');
    const isTreeNode =
      isName(node.get('Type'), 'Pages') || (!isName(node.get('Type'), 'Page') && Array.isArray(childKids));
    if (isTreeNode) {
      const resolvedKids = doc.resolve(childKids);
      if (Array.isArray(resolvedKids)) stack.push([...resolvedKids]);
    } else if (++pages > MAX_PAGES) {
      throw new PdfSyntaxError('too-complex', 'too many pages');
    }
  }
  if (pages < 1) throw new PdfSyntaxError('invalid', 'no pages');
  return pages;
}

/**
 * Distinct file specifications in the /EmbeddedFiles name tree (Kids followed, cycles ignored). Entries are counted by
 * object identity, so two keys naming one file specification count once and two files under one key name count twice.
 */
function countEmbeddedFiles(doc: PdfDocument, catalog: PdfDict, limits: ReadLimits): number {
  const names = doc.resolveDict(catalog.get('Names'));
  const tree = names?.get('EmbeddedFiles');
  const seenNodes = new Set<string>();
  const fileSpecs = new Set<string | object>();
  const queue: PdfValue[] = tree === undefined ? [] : [tree];
  while (queue.length > 0) {
    limits.checkpoint();
    const ref = queue.shift()!;
    if (ref instanceof PdfRef) {
      if (seenNodes.has(ref.key)) continue;
      seenNodes.add(ref.key);
    }
    const node = doc.resolveDict(ref);
    if (!node) continue;
    const kids = doc.resolve(node.get('Kids'));
    if (Array.isArray(kids)) queue.push(...kids);
    const pairs = doc.resolve(node.get('Names'));
    if (!Array.isArray(pairs)) continue;
    for (let i = 1; i < pairs.length; i += 2) {
      const spec = pairs[i]!;
      if (spec instanceof PdfRef) fileSpecs.add(spec.key);
      else if (isDict(spec)) fileSpecs.add(spec);
    }
  }
  return fileSpecs.size;
}
