export * from './acceptor.ts';
export { md4 } from './md4.ts';
export { Rc4, rc4k } from './rc4.ts';
