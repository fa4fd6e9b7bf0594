/**
 * The net.tcp listener: accepts sockets, gives each a BridgeConnection, and tells the service when a connection is
 * over (so the database requests it opened are rolled back unless it ended cleanly).
 *
 * Decisions:
 * - Over BRIDGE_MAX_CONNECTIONS a connection still gets its preamble read, then the ServerTooBusy framing fault, so the
 *   client raises ServerTooBusyException instead of seeing a reset; past twice the cap sockets are closed at once.
 * - Shutdown stops accepting, lets every connection finish the calls in flight (up to `shutdownMs`), then aborts what
 *   is left and closes the service, which rolls back open database requests.
 * - Security mode None: every caller is the anonymous identity. Windows security (the default): a connection must
 *   upgrade to NegotiateStream before its preamble ends (else the UpgradeInvalid framing fault), and the identity it
 *   authenticates as is its caller.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { ByteBudget, ConfigError, type EndpointConfig, type IdbService, type Logger } from '#idb';
import {
  gssapiBackendFor,
  negotiateUpgrade,
  NtlmAccounts,
  NtlmBackend,
  WinbindAuthenticator,
  type DomainLogons,
  type SecurityBackend,
  type WinbindOptions,
} from './negotiate/index.ts';
import { BridgeConnection } from './connection.ts';
import { BridgeMetrics, serveMetrics, type MetricsListener } from './metrics.ts';
import { NO_OBSERVER } from './streams.ts';
import { replyPolling } from './reply-polling.ts';
import { loadCpuYield } from './cpu-yield.ts';
import { socketStream } from './socket-stream.ts';
import type { BridgeConfig } from './config.ts';
import { soapDispatch } from './dispatch.ts';
import { metadataDispatch, metadataPath } from './mex.ts';

export interface RunningBridge {
  /** The port actually bound (BRIDGE_PORT 0 picks a free one). */
  port: number;
  connections(): number;
  /** Where /metrics and /health are served (BRIDGE_METRICS_PORT), when they are. */
  metricsPort: number | undefined;
  /** The in-flight message budget: bytes reserved for partly received envelopes, connections waiting for it. */
  inflight(): { reservedBytes: number; waiting: number };
  /** Reply bytes written to the connections' sockets and not yet taken by the kernel (BRIDGE_MAX_UNSENT_KB each). */
  unsentBytes(): number;
  /** Graceful: finishes calls in flight, rolls back open database requests, closes the databases. */
  close(): Promise<void>;
}

/** NTLM pass-through for BRIDGE_NTLM_DOMAIN: who checks, and the member's NetBIOS computer name the CHALLENGE carries. */
export interface DomainNtlm {
  logons: DomainLogons;
  computerName: string;
}

/**
 * BRIDGE_NTLM_DOMAIN's winbind and the member's names (testparm over smb.conf), read at start: ConfigError when they
 * cannot be read or smb.conf's workgroup is another domain. `options`: another smb.conf, environment or tools
 * (tests; unusual installs).
 */
export async function openDomainNtlm(
  domain: string,
  options: Omit<WinbindOptions, 'domain'> = {},
): Promise<DomainNtlm> {
  const logons = new WinbindAuthenticator({ domain, ...options });
  try {
    const names = await logons.memberNames();
    return { logons, computerName: names.computer };
  } catch (error) {
    logons.close();
    throw new ConfigError(
      `BRIDGE_NTLM_DOMAIN=${domain}: ${error instanceof Error ? error.message : String(error)} (is this host a member joined with net ads join, samba-common-bin and winbind installed?)`,
    );
  }
}

/**
 * The acceptor backends Windows security offers, from the configuration; undefined in security mode None. Throws
 * ConfigError before anything is opened when Windows security has nothing to accept with, or a secret file is
 * readable by others. BRIDGE_NTLM_BACKEND=gssapi checks BRIDGE_NTLM_USERS through gss-ntlmssp (the GSSAPI backend
 * then offers NTLM beside Kerberos) instead of the TypeScript NtlmBackend. With BRIDGE_NTLM_DOMAIN the TypeScript
 * acceptor also passes that domain's accounts to its DC: `domainNtlm` (openDomainNtlm, or openSecurityBackends).
 */
export function securityBackends(
  config: BridgeConfig,
  options: { domainNtlm?: DomainNtlm } = {},
): SecurityBackend[] | undefined {
  if (config.endpoint.security === 'none') return undefined;
  if (config.ntlmBackend === 'gssapi' && config.ntlmUsersFile === undefined) {
    throw new ConfigError(
      'BRIDGE_NTLM_BACKEND=gssapi checks the accounts of BRIDGE_NTLM_USERS through gss-ntlmssp: set BRIDGE_NTLM_USERS too',
    );
  }
  if (
    config.ntlmPolicy.kind === 'none' &&
    (config.keytab === undefined || config.ntlmUsersFile !== undefined || config.ntlmDomain !== undefined)
  )
    throw new ConfigError(
      'BRIDGE_KERBEROS_ONLY=true accepts Kerberos only: set KRB5_KTNAME (a keytab for host/<BRIDGE_DNS_IDENTITY>) and unset BRIDGE_NTLM_USERS and BRIDGE_NTLM_DOMAIN',
    );
  const domain = options.domainNtlm;
  if (config.ntlmDomain !== undefined && domain === undefined)
    throw new ConfigError('BRIDGE_NTLM_DOMAIN: the member names are read at start (openSecurityBackends)');
  // Kerberos first (SPNEGO serves the client's preferred mechanism among those offered); the GSSAPI backend also
  // offers NTLM with BRIDGE_NTLM_BACKEND=gssapi, else the TypeScript acceptor checks BRIDGE_NTLM_USERS and the domain.
  const backends: SecurityBackend[] = [];
  const gssapi = gssapiBackendFor(config);
  if (gssapi !== undefined) backends.push(gssapi);
  if (config.ntlmBackend === 'typescript' && (config.ntlmUsersFile !== undefined || domain !== undefined)) {
    const accounts =
      config.ntlmUsersFile === undefined ? NtlmAccounts.parse('') : NtlmAccounts.load(config.ntlmUsersFile);
    backends.push(
      new NtlmBackend({
        accounts,
        dnsIdentity: config.endpoint.dnsIdentity,
        // A domain's DC accepts a response only when the CHALLENGE names this member as the domain knows it.
        ...(domain === undefined ? {} : { domain: domain.logons, netbiosComputerName: domain.computerName }),
      }),
    );
  }
  if (backends.length === 0) {
    throw new ConfigError(
      'BRIDGE_SECURITY=windows needs something to accept credentials with: KRB5_KTNAME (a keytab for host/<BRIDGE_DNS_IDENTITY>), BRIDGE_NTLM_USERS (local NTLM accounts) and/or BRIDGE_NTLM_DOMAIN (domain accounts over NTLM); or BRIDGE_SECURITY=none for clients configured with SecurityMode.None.',
    );
  }
  return backends;
}

/** securityBackends, with BRIDGE_NTLM_DOMAIN's winbind opened first (`winbind`: openDomainNtlm's options). */
export async function openSecurityBackends(
  config: BridgeConfig,
  winbind: Omit<WinbindOptions, 'domain'> = {},
): Promise<SecurityBackend[] | undefined> {
  const domainNtlm =
    config.endpoint.security === 'windows' && config.ntlmDomain !== undefined
      ? await openDomainNtlm(config.ntlmDomain, winbind)
      : undefined;
  try {
    return securityBackends(config, { domainNtlm });
  } catch (error) {
    domainNtlm?.logons.close();
    throw error;
  }
}

export async function startBridge(
  config: BridgeConfig,
  service: IdbService,
  logger: Logger,
  backends = securityBackends(config),
): Promise<RunningBridge> {
  const metrics = config.metrics === undefined ? undefined : new BridgeMetrics();
  const observer = metrics ?? NO_OBSERVER;
  const dispatch = soapDispatch(service, { serviceNamespace: config.endpoint.serviceNamespace, logger, observer });
  const path = new URL(config.endpoint.address.replace(/^net\.tcp:/, 'http:')).pathname;
  const mexPath = config.mex ? metadataPath(path).toLowerCase() : undefined;
  const metadata =
    mexPath === undefined
      ? undefined
      : {
          accepts: (via: string) => viaPath(via) === mexPath,
          dispatch: metadataDispatch(() => publishedEndpoint(config.endpoint, port), logger),
        };
  const upgrade =
    backends === undefined
      ? undefined
      : negotiateUpgrade({ backends, protectionLevel: config.endpoint.protectionLevel, ntlmPolicy: config.ntlmPolicy });
  const budget = new ByteBudget(config.maxInflightBytes);
  const inflight = () => ({ reservedBytes: budget.reserved, waiting: budget.waiters });
  const unsentBytes = () => {
    let unsent = 0;
    for (const socket of sockets) unsent += socket.writableLength;
    return unsent;
  };
  const live = new Set<BridgeConnection>();
  const sockets = new Set<Socket>();
  let refused = 0;

  // The polling lets a thread waiting for its CPU go first (cpu-yield.ts, reply-polling.ts).
  const afterReplies = replyPolling(
    config.pollAfterReplyMs,
    undefined,
    undefined,
    config.pollAfterReplyMs > 0 ? loadCpuYield() : undefined,
  );
  const server: Server = createServer({ noDelay: true }, (socket: Socket) => {
    const over = live.size >= config.maxConnections;
    if (over && refused >= config.maxConnections) {
      socket.destroy();
      return;
    }
    if (over) refused++;
    sockets.add(socket);
    const connectionId = randomUUID();
    const polling = afterReplies.connection();
    const connection = new BridgeConnection(socketStream(socket, polling), {
      connectionId,
      remoteAddress: socket.remoteAddress ?? '',
      ...(upgrade === undefined ? {} : { upgrade }),
      dispatch,
      ...(metadata === undefined ? {} : { metadata }),
      decoder: {
        maxMessageSize: config.maxMessageBytes,
        // WCF matches the via's path against the endpoint's, whatever host name the client used.
        acceptVia: (via) => viaPath(via) === path.toLowerCase(),
      },
      initTimeoutMs: config.initTimeoutMs,
      idleTimeoutMs: config.idleTimeoutMs,
      messageTimeoutMs: config.messageTimeoutMs,
      budget,
      sendTimeoutMs: config.sendTimeoutMs,
      maxCallsAhead: config.maxCallsPerConnection,
      maxUnsentBytes: config.maxUnsentBytes,
      ...(over ? { refuseWith: 'ServerTooBusy' as const } : {}),
      logger,
      observer,
      onClosed: (clean) => {
        if (over) refused--;
        else live.delete(connection);
        logger.log('debug', 'connection closed', { connectionId, clean });
        void service.connectionClosed(connectionId, clean);
      },
    });
    if (!over) live.add(connection);
    socket.on('data', (chunk: Buffer) => {
      polling.received();
      connection.receive(chunk);
    });
    socket.on('close', () => {
      sockets.delete(socket);
      connection.streamClosed();
    });
    socket.on('error', () => connection.abort());
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A reconnect storm (every pooled client of a restarted bridge at once) overflows Node's default backlog of
    // 511: the kernel drops the SYNs beyond it and those clients retry a second or more later. The kernel caps it
    // (net.core.somaxconn).
    const backlog = Math.max(511, 2 * config.maxConnections);
    server.listen({ port: config.endpoint.port, host: config.endpoint.host, backlog }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let metricsListener: MetricsListener | undefined;
  if (metrics !== undefined && config.metrics !== undefined) {
    metrics.watch({
      connections: () => live.size,
      openDatabaseRequests: () => service.openRequests(),
      inflight,
      unsentBytes,
    });
    metricsListener = await serveMetrics(metrics, config.metrics.host, config.metrics.port).catch((error: unknown) => {
      server.close();
      throw error;
    });
    logger.log('info', 'bridge metrics listening', {
      url: `http://${config.metrics.host}:${metricsListener.port}/metrics`,
    });
  }
  logger.log('info', 'bridge listening', {
    url: `net.tcp://${config.endpoint.host}:${port}${path}`,
    security: config.endpoint.security,
    ...(mexPath === undefined ? {} : { mex: `net.tcp://${config.endpoint.host}:${port}${metadataPath(path)}` }),
  });

  return {
    port,
    metricsPort: metricsListener?.port,
    connections: () => live.size,
    inflight,
    unsentBytes,
    async close() {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const connection of live) connection.drain();
      const deadline = Date.now() + config.shutdownMs;
      while (live.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      for (const connection of live) connection.abort();
      // Connections that ended their side may still wait for the client's; the listener closes only without them.
      for (const socket of sockets) socket.destroy();
      await stopped;
      await metricsListener?.close();
      await service.close();
      for (const backend of backends ?? []) backend.close();
    },
  };
}

/** The endpoint the description publishes: with BRIDGE_PORT=0 and no BRIDGE_PUBLIC_URL, the port the listener got. */
function publishedEndpoint(endpoint: EndpointConfig, port: number): EndpointConfig {
  const address = new URL(endpoint.address.replace(/^net\.tcp:/i, 'http:'));
  if (endpoint.port !== 0 || address.port !== '0') return endpoint;
  address.port = String(port);
  return { ...endpoint, port, address: address.href.replace(/^http:/, 'net.tcp:') };
}

function viaPath(via: string): string | undefined {
  try {
    return new URL(via.replace(/^net\.tcp:/i, 'http:')).pathname.toLowerCase();
  } catch {
    return undefined;
  }
}
