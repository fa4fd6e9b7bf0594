/**
 * The bridge as configured, in the order it is put together: the roles file (with Active Directory names resolved
 * over LDAP when BRIDGE_LDAP_URL is set, directory.ts), the security backends (with BRIDGE_NTLM_DOMAIN's winbind,
 * server.ts), the service (`#idb/node`), then the listener. What `npm run bridge` (main.ts) runs, and what the tests
 * start to exercise the same wiring. Everything opened before a failure is closed again; the returned bridge's
 * close() also stops the directory's refreshes (the backends, winbind's helper among them, close with the listener).
 */
import type { ConnectionOptions } from 'node:tls';
import type { Logger } from '#idb';
import { openNodeIdbService, readRolesFile } from '#idb/node';
import type { BridgeConfig } from './config.ts';
import { openRolesDirectory, type RolesDirectory } from './directory.ts';
import type { SecurityBackend, WinbindOptions } from './negotiate/index.ts';
import { openSecurityBackends, startBridge, type RunningBridge } from './server.ts';

/** How this host reaches the domain when it is not set up as a production member (the tests' is not). */
export interface HostOptions {
  /** ntlm_auth, wbinfo and testparm: another smb.conf (`config`) or environment (`env`). */
  winbind?: Omit<WinbindOptions, 'domain'>;
  /** TLS options for LDAP beyond BRIDGE_LDAP_CA_FILE: a `servername` when the DC is reached by address. */
  ldapTls?: ConnectionOptions;
}

export async function openBridge(config: BridgeConfig, logger: Logger, host: HostOptions = {}): Promise<RunningBridge> {
  let directory: RolesDirectory | undefined;
  let backends: SecurityBackend[] | undefined;
  try {
    const roles = await readRolesFile(config.rolesFile);
    if (config.ldap !== undefined) directory = await openRolesDirectory(config.ldap, roles, logger, host.ldapTls);
    backends = await openSecurityBackends(config, host.winbind);
    const service = await openNodeIdbService(config, logger, { roles: directory?.roles ?? roles });
    const bridge = await startBridge(config, service, logger, backends).catch(async (error: unknown) => {
      await service.close();
      throw error;
    });
    const opened = directory;
    return {
      ...bridge,
      async close() {
        await bridge.close();
        opened?.close();
      },
    };
  } catch (error) {
    directory?.close();
    for (const backend of backends ?? []) backend.close();
    throw error;
  }
}
