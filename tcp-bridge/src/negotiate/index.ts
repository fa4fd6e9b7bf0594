export * from './security-context.ts';
export * from './nns.ts';
export * from './spnego.ts';
export * from './ntlm.ts';
export * from './gssapi.ts';
export * from './stream.ts';
export { md4 } from './md4.ts';
export { Rc4, rc4k } from './rc4.ts';
