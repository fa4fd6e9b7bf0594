/**
 * `npm run bridge -- --help`: what the bridge reads from its environment, in short; docs/bridge.md has the whole
 * table. Settings are environment variables only (config.ts), so this is the one command-line flag.
 */
export const HELP = `IIDBService over net.tcp for .NET WCF clients (docs/bridge.md).

Usage: npm run bridge            (settings from the environment)
       npm run bridge -- --help  (this text)

Listening and security
  BRIDGE_PORT, BRIDGE_HOST        8808, 127.0.0.1
  BRIDGE_SECURITY                 windows (NegotiateStream: NTLM, Kerberos) | none
  BRIDGE_PROTECTION_LEVEL         EncryptAndSign | Sign
  BRIDGE_ROLES_FILE               {"reader": [...], "writer": [...], "groups": {...}}; unset: only Heartbeat
  KRB5_KTNAME, BRIDGE_NTLM_USERS, BRIDGE_NTLM_DOMAIN, BRIDGE_NTLM_BACKEND, BRIDGE_LDAP_*

Database (DATABASE_URL, and DATABASE_URL_<NAME> for logical databases a client names)
  file:./data/idb.sqlite          the embedded SQLite file (default)
  postgres://user:pass@host/db    PostgreSQL
  sqlserver://user@host:1433/db?passwordFile=/run/secrets/sql&readerUser=ro&readerPasswordFile=/run/secrets/ro
                                  SQL Server (or Babelfish) over TDS: client SQL is T-SQL, run as SqlClient runs it.
                                  TLS with the certificate checked (encrypt=true); ca=<pem> for a private CA;
                                  trustServerCertificate=true is the explicit opt-out. maxConnections=10 per login.
                                  Passwords: the files above, or DATABASE_PASSWORD / DATABASE_READER_PASSWORD
                                  (_<NAME> for DATABASE_URL_<NAME>); never in the URL. readerUser (db_datareader
                                  only) is required when the roles file names readers.
  DB_STATEMENT_TIMEOUT_MS, DB_MAX_ROWS, DB_REQUEST_IDLE_MS, DB_MAX_REQUESTS_PER_IDENTITY

Files
  FILES_URL                       file:./data/files | s3://bucket/prefix/?endpoint=...

Limits and observability
  MAX_MESSAGE_MB, BRIDGE_MAX_CONNECTIONS, BRIDGE_MAX_INFLIGHT_MB, BRIDGE_*_TIMEOUT_MS, BRIDGE_METRICS_PORT, LOG_LEVEL
`;
