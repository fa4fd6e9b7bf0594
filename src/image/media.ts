/** The image formats extract reads as a one-page document (image-document.ts). */
export type ImageMedia = 'jpeg' | 'png' | 'tiff';

const SIGNATURES: [ImageMedia, number[]][] = [
  ['jpeg', [0xff, 0xd8, 0xff]],
  ['png', [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
  ['tiff', [0x49, 0x49, 0x2a, 0x00]],
  ['tiff', [0x4d, 0x4d, 0x00, 0x2a]],
];

/**
 * The image format whose signature the bytes start with, or undefined (then they are taken for a PDF, whose own
 * header check follows). Used for a form's `file` part, whose Content-Type clients set loosely or not at all.
 */
export function sniffImage(bytes: Uint8Array): ImageMedia | undefined {
  for (const [media, signature] of SIGNATURES) {
    if (signature.every((byte, i) => bytes[i] === byte)) return media;
  }
  return undefined;
}
