export { checkKeytab, GssapiBackend, gssapiBackendFromEnv, type GssapiBackendOptions } from './backend.ts';
export { GssFlag } from './ffi.ts';
export { GssapiKerberosContext, kerberosPeerName } from './kerberos.ts';
export { GssapiNtlmContext, loadGssNtlmUsers } from './ntlm.ts';
