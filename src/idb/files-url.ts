/**
 * Reads FILES_URL (docs/contract/operations.md: "a folder, or `s3://bucket?endpoint=…` for S3-compatible storage",
 * default
 * `file:./data/files`) into a store configuration. Platform-free: the runtime entry builds the store from it (a folder
 * needs the runtime's file system; a relative folder is resolved against the working directory there).
 *
 * Accepted forms:
 * - `file:./data/files`, `file:data/files` (relative to the working directory), `file:/abs/path`, `file:///abs/path`,
 *   `file://localhost/abs/path`, `file:///C:/files` (a Windows drive path). Percent-escapes are decoded, as in any file
 *   URL (`file:./my%20files`).
 * - `s3://bucket`, `s3://bucket/prefix/` with these query parameters (any other is refused, so a typo is not ignored):
 *   - `endpoint`: http(s) origin of an S3-compatible service (R2: `https://<account>.r2.cloudflarestorage.com`, a local
 *     s3rver or MinIO: `http://127.0.0.1:4569`). Default: AWS, `https://s3.<region>.amazonaws.com`.
 *   - `region`: signing region. Default: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1` (R2 takes `auto`,
 * and     also accepts `us-east-1`).
 *   - `forcePathStyle`: `true` puts the bucket in the path (`endpoint/bucket/key`), `false` in the host name
 *     (`bucket.endpoint/key`). Default: true with an `endpoint` (R2, MinIO and s3rver all serve path style, and a
 *     local endpoint has no DNS for bucket host names), false for AWS (which is retiring path style).
 * - Credentials never come from the URL (FILES_URL is logged and shown; a secret in it would leak): they come from
 *   `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and, for temporary credentials, `AWS_SESSION_TOKEN`, the names every
 *   AWS tool reads. Both keys are required for s3.
 */
import { ConfigError, type Environment } from '../config.ts';

export type FilesConfig = FolderFilesConfig | S3FilesConfig;

export interface FolderFilesConfig {
  kind: 'folder';
  /** As written: relative paths are relative to the working directory of the process. */
  path: string;
}

export interface S3FilesConfig {
  kind: 's3';
  bucket: string;
  /** Prepended to every key; empty or ending in `/`. */
  prefix: string;
  /** Origin without a trailing slash, e.g. `http://127.0.0.1:4569`. */
  endpoint: string;
  region: string;
  forcePathStyle: boolean;
  credentials: S3Credentials;
}

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export const DEFAULT_FILES_URL = 'file:./data/files';

export function readFilesConfig(env: Environment): FilesConfig {
  return parseFilesUrl(env.FILES_URL || DEFAULT_FILES_URL, env);
}

export function parseFilesUrl(url: string, env: Environment = {}): FilesConfig {
  if (/^file:/i.test(url)) return { kind: 'folder', path: folderPath(url.slice('file:'.length)) };
  if (/^s3:/i.test(url)) return s3Config(url, env);
  throw new ConfigError(`FILES_URL must be file:<folder> or s3://<bucket>?endpoint=…, not "${url}"`);
}

function folderPath(rest: string): string {
  if (/[?#]/.test(rest)) throw new ConfigError('FILES_URL file: takes a folder path only, no query or fragment');
  let path = rest;
  if (rest.startsWith('//')) {
    // An authority: only the local machine makes sense for a folder the process writes to.
    const slash = rest.indexOf('/', 2);
    const host = rest.slice(2, slash < 0 ? undefined : slash);
    if (host !== '' && host.toLowerCase() !== 'localhost')
      throw new ConfigError(`FILES_URL file: must name a local folder, not one on host "${host}"`);
    path = slash < 0 ? '' : rest.slice(slash);
    if (/^\/[A-Za-z]:\//.test(path)) path = path.slice(1); // file:///C:/files names C:/files
  }
  try {
    path = decodeURIComponent(path);
  } catch {
    throw new ConfigError('FILES_URL file: path has a malformed %-escape');
  }
  if (path === '' || path.includes('\0'))
    throw new ConfigError('FILES_URL file: needs a folder path, e.g. file:./data/files');
  return path;
}

/** S3's rules for new bucket names (3 to 63 lower-case letters, digits, dots and hyphens), which R2 shares. */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** A conservative prefix alphabet: these characters sign and route the same on S3, R2, MinIO and s3rver. */
const PREFIX = /^(?:[A-Za-z0-9_.-]+\/)*$/;
const PARAMETERS = new Set(['endpoint', 'region', 'forcePathStyle']);

function s3Config(raw: string, env: Environment): S3FilesConfig {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`FILES_URL is not a valid URL: "${raw}"`);
  }
  if (url.username || url.password)
    throw new ConfigError('FILES_URL must not carry credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY');
  if (url.hash) throw new ConfigError('FILES_URL s3: takes no fragment');
  if (url.port) throw new ConfigError('FILES_URL s3://<bucket>: the port belongs in the endpoint parameter');
  const bucket = url.hostname;
  if (!BUCKET.test(bucket))
    throw new ConfigError(`FILES_URL s3: bucket name "${bucket}" is not a valid S3 bucket name`);
  const prefix = url.pathname.replace(/^\//, '');
  if (prefix !== '' && !PREFIX.test(prefix))
    throw new ConfigError('FILES_URL s3: the key prefix must end in / and use only letters, digits, _ . - and /');
  for (const name of url.searchParams.keys()) {
    if (!PARAMETERS.has(name))
      throw new ConfigError(`FILES_URL s3: unknown parameter "${name}" (known: ${[...PARAMETERS].join(', ')})`);
  }
  const region = url.searchParams.get('region') || env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
  if (!/^[a-z0-9-]+$/.test(region)) throw new ConfigError(`FILES_URL s3: region "${region}" is not a region name`);
  const endpointParam = url.searchParams.get('endpoint');
  const endpoint = endpointParam === null ? `https://s3.${region}.amazonaws.com` : origin(endpointParam);
  const forcePathStyle = flag(url.searchParams.get('forcePathStyle'), endpointParam !== null);
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey)
    throw new ConfigError('FILES_URL s3: needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment');
  const credentials: S3Credentials = { accessKeyId, secretAccessKey };
  if (env.AWS_SESSION_TOKEN) credentials.sessionToken = env.AWS_SESSION_TOKEN;
  return { kind: 's3', bucket, prefix, endpoint, region, forcePathStyle, credentials };
}

function origin(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new ConfigError(`FILES_URL s3: endpoint "${endpoint}" is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError('FILES_URL s3: endpoint must be http: or https:');
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) {
    throw new ConfigError(
      'FILES_URL s3: endpoint must be an origin only (scheme, host, port), e.g. http://127.0.0.1:4569',
    );
  }
  return url.origin;
}

function flag(value: string | null, fallback: boolean): boolean {
  if (value === null) return fallback;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new ConfigError(`FILES_URL s3: forcePathStyle must be true or false, not "${value}"`);
}
