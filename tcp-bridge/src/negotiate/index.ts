export * from './security-context.ts';
export * from './nns.ts';
export * from './spnego.ts';
export * from './ntlm/index.ts';
export * from './gssapi/index.ts';
export * from './stream.ts';
export * from './ntlm-policy.ts';
export {
  WinbindAuthenticator,
  WinbindError,
  type DomainLogon,
  type DomainLogonRequest,
  type WinbindOptions,
} from './winbind.ts';
