/** The image formats extract reads as a one-page document (image-document.ts). */
export type ImageMedia = 'jpeg' | 'png' | 'tiff';
