import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.ts';
import { OPERATIONS, REQUIRED_ROLE } from '../../src/idb/contract.ts';
import { readIdbConfig } from '../../src/idb/config.ts';
import { NO_ROLES, parseRoles } from '../../src/idb/roles.ts';

const person = (name: string) => ({ name, anonymous: false });
const anonymous = { name: 'anonymous', anonymous: true };

describe('roles file', () => {
  const roles = parseRoles(
    JSON.stringify({
      reader: ['auditors', 'bob@CORP.EXAMPLE'],
      writer: ['CORP\\alice', 'admins'],
      groups: { auditors: ['CORP\\carol', 'interns'], interns: ['CORP\\dave'], admins: ['CORP\\erin'] },
    }),
    'roles.json',
  );

  it('grants readers the reading operations and writers everything, names compared case-insensitively', () => {
    const readerOps = OPERATIONS.filter((op) => REQUIRED_ROLE[op] !== 'writer');
    expect(readerOps).toEqual([
      'Heartbeat',
      'ReturnDatatable',
      'ReturnScalar',
      'GetFile',
      'GetDocumentByDocumentId',
      'GetDocumentByContainerId',
    ]);
    for (const name of ['bob@corp.example', 'corp\\CAROL', 'CORP\\dave']) {
      expect(
        OPERATIONS.filter((op) => roles.allows(person(name), op)),
        name,
      ).toEqual(readerOps);
    }
    for (const name of ['CORP\\Alice', 'corp\\erin'])
      expect(
        OPERATIONS.every((op) => roles.allows(person(name), op)),
        name,
      ).toBe(true);
    expect([...roles.rolesOf(person('CORP\\alice'))].sort()).toEqual(['reader', 'writer']);
  });

  it('denies by default: unknown identities, the anonymous identity, and everybody without a file get Heartbeat only', () => {
    for (const [r, caller] of [
      [roles, person('CORP\\mallory')],
      [roles, anonymous],
      [NO_ROLES, person('CORP\\alice')],
      [NO_ROLES, anonymous],
    ] as const) {
      expect(OPERATIONS.filter((op) => r.allows(caller, op))).toEqual(['Heartbeat']);
    }
  });

  it('lets "*" stand for any authenticated identity but never the anonymous one, which must be named', () => {
    const any = parseRoles('{"reader": ["*"]}', 'r');
    expect(any.allows(person('X\\y'), 'GetFile')).toBe(true);
    expect(any.allows(anonymous, 'GetFile')).toBe(false);
    const open = parseRoles('{"writer": ["anonymous"]}', 'r');
    expect(open.allows(anonymous, 'NewFile')).toBe(true);
    expect(open.allows(person('X\\y'), 'NewFile')).toBe(false);
  });

  it.each([
    ['not JSON', '{', /not JSON/],
    ['an array', '[]', /JSON object/],
    ['a misspelt key', '{"readers": []}', /unknown key "readers"/],
    ['a member that is no string', '{"reader": [1]}', /array of non-empty strings/],
    ['an undefined group', '{"reader": ["acounting"]}', /no group/],
    ['a group cycle', '{"reader": ["a"], "groups": {"a": ["b"], "b": ["a"]}}', /contains itself/],
    ['a group named *', '{"groups": {"*": ["X\\\\y"]}}', /cannot be a group name/],
  ])('refuses %s, naming the file', (_, text, message) => {
    expect(() => parseRoles(text, 'roles.json')).toThrow(ConfigError);
    expect(() => parseRoles(text, 'roles.json')).toThrow(message);
  });
});

describe('roles by Active Directory SIDs and groups', () => {
  const DOMAIN = 'S-1-5-21-1004336348-1177238915-682003330';
  const withSids = (name: string, ...sids: string[]) => ({ name, anonymous: false, sids });
  const roles = parseRoles(
    JSON.stringify({
      reader: ['CORP\\IDB Readers', `${DOMAIN}-1105`],
      writer: ['ops', 's-1-5-21-1004336348-1177238915-682003330-1200'],
      groups: { ops: ['CORP\\IDB Writers', 'alice@CORP.EXAMPLE'] },
    }),
    'roles.json',
  );

  it("matches a SID entry against the caller's SIDs (the user's own or a group's), in either case of S", () => {
    expect([...roles.rolesOf(withSids('bob@CORP.EXAMPLE', `${DOMAIN}-513`, `${DOMAIN}-1105`))]).toEqual(['reader']);
    expect([...roles.rolesOf(withSids('CORP\\carol', `${DOMAIN}-1200`))].sort()).toEqual(['reader', 'writer']);
    expect(roles.rolesOf(withSids('CORP\\dave', `${DOMAIN}-1106`)).size).toBe(0);
    expect(roles.rolesOf({ name: 'CORP\\dave', anonymous: false }).size).toBe(0);
    // The anonymous identity never carries SIDs that count.
    expect(roles.rolesOf({ name: 'anonymous', anonymous: true, sids: [`${DOMAIN}-1200`] }).size).toBe(0);
  });

  it('lists the DOMAIN\\name entries (groups expanded; not SIDs, principals or roles-file groups) for a directory to resolve', () => {
    expect([...roles.accountNames].sort()).toEqual(['corp\\idb readers', 'corp\\idb writers']);
    expect(NO_ROLES.accountNames).toEqual([]);
  });

  it("with a directory, a DOMAIN\\Group entry matches a caller carrying the group's SID, asked at each call", () => {
    const directory = new Map([['corp\\idb readers', `${DOMAIN}-1300`]]);
    const resolved = roles.withDirectory({ sidOf: (name) => directory.get(name) });
    const alice = withSids('alice@CORP.EXAMPLE', `${DOMAIN}-1103`, `${DOMAIN}-1300`);
    const erin = withSids('CORP\\erin', `${DOMAIN}-1104`, `${DOMAIN}-1301`);
    expect([...resolved.rolesOf(withSids('CORP\\frank', `${DOMAIN}-1300`))]).toEqual(['reader']);
    expect(resolved.allows(erin, 'NewFile')).toBe(false);
    // A refresh: the writers' group resolves now, and a re-created readers group has another SID.
    directory.set('corp\\idb writers', `${DOMAIN}-1301`);
    directory.set('corp\\idb readers', `${DOMAIN}-1400`);
    expect(resolved.allows(erin, 'NewFile')).toBe(true);
    expect(resolved.allows(withSids('CORP\\frank', `${DOMAIN}-1300`), 'GetFile')).toBe(false);
    // Names still match by name, with or without the directory; the roles without it are unchanged.
    expect(resolved.allows(alice, 'NewFile')).toBe(true);
    expect(roles.allows(erin, 'NewFile')).toBe(false);
    expect(roles.allows({ name: 'corp\\IDB Writers', anonymous: false }, 'NewFile')).toBe(true);
  });

  it.each([
    ['a SID with a leading zero', '{"reader": ["S-1-5-21-01"]}'],
    ['a SID with a letter', '{"reader": ["S-1-5-21-1x"]}'],
    ['a SID that is only an authority', '{"reader": ["S-1-5"]}'],
    ['a malformed SID in a group', '{"reader": ["g"], "groups": {"g": ["S-1-5-21--5"]}}'],
  ])('refuses %s', (_, text) => {
    expect(() => parseRoles(text, 'roles.json')).toThrow(/no SID|no group/);
  });
});

describe('IIDBService configuration', () => {
  it('has the documented defaults', () => {
    const config = readIdbConfig({});
    expect([...config.databases]).toEqual([['default', 'file:./data/idb.sqlite']]);
    expect(config.files).toEqual({ kind: 'folder', path: './data/files' });
    expect(config.limits).toEqual({
      statementTimeoutMs: 30000,
      maxRows: 100000,
      requestIdleMs: 120000,
      maxRequestsPerIdentity: 16,
    });
    expect(config.endpoint).toMatchObject({
      serviceNamespace: 'http://tempuri.org/',
      security: 'windows',
      protectionLevel: 'EncryptAndSign',
      dnsIdentity: 'localhost',
      address: 'net.tcp://localhost:8808/IDBService',
      host: '127.0.0.1',
    });
    expect(config.rolesFile).toBeUndefined();
    expect(config.maxMessageBytes).toBe(64 * 1024 * 1024);
  });

  it('names further databases DATABASE_URL_<NAME>, case-insensitively', () => {
    const config = readIdbConfig({ DATABASE_URL: 'postgres://db/main', DATABASE_URL_Archive: 'file:/a.sqlite' });
    expect([...config.databases]).toEqual([
      ['default', 'postgres://db/main'],
      ['archive', 'file:/a.sqlite'],
    ]);
    expect(() => readIdbConfig({ DATABASE_URL_DEFAULT: 'x' })).toThrow(ConfigError);
  });

  it.each([
    ['BRIDGE_SECURITY', 'kerberos'],
    ['BRIDGE_PROTECTION_LEVEL', 'None'],
    ['SERVICE_NAMESPACE', 'http://a/<b>'],
    ['BRIDGE_PUBLIC_URL', 'http://host/IDBService'],
    ['DB_MAX_ROWS', '0'],
    ['DB_REQUEST_IDLE_MS', 'soon'],
  ])('refuses %s=%s', (name, value) => {
    expect(() => readIdbConfig({ [name]: value })).toThrow(name);
  });
});
