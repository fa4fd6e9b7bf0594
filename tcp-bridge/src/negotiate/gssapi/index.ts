export {
  checkKeytab,
  GssapiBackend,
  gssapiBackendFor,
  type GssapiBackendOptions,
  type GssapiSettings,
} from './backend.ts';
export { GssFlag } from './ffi.ts';
export { GssapiKerberosContext, kerberosPeerName } from './kerberos.ts';
export { GssapiNtlmContext, loadGssNtlmUsers } from './ntlm.ts';
