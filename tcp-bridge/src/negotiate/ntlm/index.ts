export * from './messages.ts';
export * from './crypto.ts';
export * from './session-security.ts';
export * from './accounts.ts';
export * from './throttle.ts';
export * from './checks.ts';
export * from './acceptor.ts';
export { md4 } from './md4.ts';
export { Rc4, rc4k } from './rc4.ts';
