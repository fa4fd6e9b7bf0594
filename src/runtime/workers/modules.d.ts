/**
 * Modules that wrangler (and the Workers vitest pool) load through the module rules of wrangler.toml rather than as
 * JavaScript: the PDFium binary as a compiled WebAssembly.Module (rule "CompiledWasm") and the API reference's browser
 * bundle as its source text (rule "Text").
 */
declare module '@embedpdf/pdfium/pdfium.wasm' {
  const module: WebAssembly.Module;
  export default module;
}

declare module '@scalar/api-reference/browser/standalone.js' {
  const source: string;
  export default source;
}
