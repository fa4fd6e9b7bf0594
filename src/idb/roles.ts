/**
 * Who may call what (docs/contract/iidbservice.md "Rules users rely on", operations.md BRIDGE_ROLES_FILE): the roles
 * file names identities and groups per role, and every operation needs a role (contract.ts REQUIRED_ROLE). Default
 * deny.
 *
 * Decisions:
 * - The file is JSON `{"reader": [...], "writer": [...], "groups": {"name": [members]}}`. Unknown keys, a non-string
 *   member, a group that names an undefined group or itself through others, a malformed SID, or a role entry that is
 *   neither an identity, a SID, `*`, `anonymous` nor a defined group are refused at start: a typo must not silently
 *   deny (or grant). A group may contain groups.
 * - Names compare case-insensitively, as Windows compares accounts (`CORP\Alice` is `corp\alice`); Kerberos realms
 *   are upper case by convention, so `alice@CORP.EXAMPLE` and `Alice@corp.example` are one identity here too.
 * - Active Directory: an entry may be a SID (`S-1-5-21-…-1105`, as Windows prints it), which matches a caller whose
 *   logon carried it (Caller.sids: the user's own SID or an enabled group's, nested groups included). A
 *   `DOMAIN\name` entry matches the caller of that name and, once `withDirectory` gives these roles a directory
 *   (an adapter that resolves the entries of `accountNames` to SIDs, over LDAP in the bridge), any caller carrying
 *   the SID the directory has for it now: so `CORP\IDB Readers` grants a role to the group's members, and
 *   `CORP\alice` to alice however she logs on. Membership is never looked up here: it comes with the logon, so a user
 *   added to a group has the role at their next logon. The directory is asked at each call, so its refreshes count.
 * - `*` is any authenticated identity, never the anonymous one: granting `*` must not open a bridge that runs with
 *   security mode None to everybody. `anonymous` has to be named.
 * - A writer may do what a reader may.
 * - No file: only Heartbeat (which needs no role).
 */
import { ConfigError } from '../config.ts';
import { REQUIRED_ROLE, type Caller, type OperationName } from './contract.ts';

export type Role = 'reader' | 'writer';

/** What the roles need of a caller. */
export type RoleSubject = Pick<Caller, 'name' | 'anonymous' | 'sids'>;

export interface Roles {
  /** The roles `caller` has, after groups are resolved. */
  rolesOf(caller: RoleSubject): ReadonlySet<Role>;
  /** Whether `caller` may call `operation`. */
  allows(caller: RoleSubject, operation: OperationName): boolean;
  /** Whether the file names any reader (a backend without read-only transactions must then have a reader login). */
  readonly hasReaders: boolean;
  /** The `DOMAIN\name` entries the roles grant through (lower case): what a directory may resolve to SIDs. */
  readonly accountNames: readonly string[];
  /** These roles, with `DOMAIN\name` entries also matching callers that carry the SID `directory` has for them. */
  withDirectory(directory: AccountDirectory): Roles;
}

/**
 * The port to a directory of accounts (Active Directory over LDAP in the bridge): the SID a `DOMAIN\name` (user or
 * group) stands for now, undefined when it has none (another domain's name, or an account gone since).
 */
export interface AccountDirectory {
  sidOf(name: string): string | undefined;
}

const ANY_AUTHENTICATED = '*';
const ANONYMOUS = 'anonymous';

/** Nobody has a role: what an unset BRIDGE_ROLES_FILE means. */
export const NO_ROLES: Roles = rolesFrom({ reader: new Set(), writer: new Set() });

/** Reads the roles file's JSON text; `source` names it in errors. Throws ConfigError. */
export function parseRoles(text: string, source: string): Roles {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${source}: not JSON (${(error as Error).message})`);
  }
  if (!isObject(json)) throw new ConfigError(`${source}: must be a JSON object with "reader", "writer" and "groups"`);
  for (const key of Object.keys(json))
    if (!['reader', 'writer', 'groups'].includes(key)) throw new ConfigError(`${source}: unknown key "${key}"`);

  const groups = new Map<string, string[]>();
  if (json.groups !== undefined) {
    if (!isObject(json.groups)) throw new ConfigError(`${source}: "groups" must be an object of group name to members`);
    for (const [name, members] of Object.entries(json.groups)) {
      const key = normalize(name);
      if (key === ANY_AUTHENTICATED || key === ANONYMOUS || key === '')
        throw new ConfigError(`${source}: "${name}" cannot be a group name`);
      if (groups.has(key)) throw new ConfigError(`${source}: group "${name}" is defined twice`);
      groups.set(key, names(members, `${source}: group "${name}"`));
    }
  }

  // Members of each group, groups inside it resolved; a cycle is an error, not a silent grant.
  const resolved = new Map<string, Set<string>>();
  const resolving = new Set<string>();
  const expand = (group: string): Set<string> => {
    const done = resolved.get(group);
    if (done) return done;
    if (resolving.has(group)) throw new ConfigError(`${source}: group "${group}" contains itself`);
    resolving.add(group);
    const members = new Set<string>();
    for (const member of groups.get(group)!) {
      if (groups.has(member)) for (const m of expand(member)) members.add(m);
      else members.add(member);
    }
    resolving.delete(group);
    resolved.set(group, members);
    return members;
  };

  const role = (name: Role): Set<string> => {
    const entries = json[name] === undefined ? [] : names(json[name], `${source}: "${name}"`);
    const members = new Set<string>();
    for (const entry of entries) {
      if (groups.has(entry)) for (const m of expand(entry)) members.add(m);
      else if (entry === ANY_AUTHENTICATED || entry === ANONYMOUS || isIdentity(entry) || isSid(entry))
        members.add(entry);
      else
        throw new ConfigError(
          `${source}: "${name}" names "${entry}", which is no group, DOMAIN\\user, DOMAIN\\Group, user@REALM, SID, "*" or "anonymous"`,
        );
    }
    return members;
  };
  for (const group of groups.keys()) expand(group);
  return rolesFrom({ reader: role('reader'), writer: role('writer') });
}

function rolesFrom(members: Record<Role, ReadonlySet<string>>, directory?: AccountDirectory): Roles {
  const accounts: Record<Role, string[]> = {
    reader: [...members.reader].filter(isAccountName),
    writer: [...members.writer].filter(isAccountName),
  };
  const has = (role: Role, caller: RoleSubject, sids: ReadonlySet<string>): boolean => {
    const set = members[role];
    if (caller.anonymous) return set.has(ANONYMOUS);
    if (set.has(ANY_AUTHENTICATED) || set.has(normalize(caller.name))) return true;
    if (sids.size === 0) return false;
    if (intersects(sids, set)) return true;
    if (directory === undefined) return false;
    for (const name of accounts[role]) {
      const sid = directory.sidOf(name);
      if (sid !== undefined && sids.has(normalize(sid))) return true;
    }
    return false;
  };
  const rolesOf = (caller: RoleSubject): ReadonlySet<Role> => {
    const sids = sidsOf(caller);
    const roles = new Set<Role>();
    if (has('writer', caller, sids)) roles.add('writer').add('reader');
    else if (has('reader', caller, sids)) roles.add('reader');
    return roles;
  };
  return {
    rolesOf,
    hasReaders: members.reader.size > 0,
    allows(caller, operation) {
      const needed = REQUIRED_ROLE[operation];
      return needed === 'none' || rolesOf(caller).has(needed);
    },
    accountNames: [...new Set([...accounts.reader, ...accounts.writer])],
    withDirectory: (next) => rolesFrom(members, next),
  };
}

const NO_SIDS: ReadonlySet<string> = new Set();
const sidSets = new WeakMap<readonly string[], ReadonlySet<string>>();

/**
 * The caller's SIDs as the roles compare them (lower case), none for the anonymous identity. Made once per logon, not
 * per call: the transport hands every call of a connection the same array, and a token may carry hundreds of groups.
 */
function sidsOf(caller: RoleSubject): ReadonlySet<string> {
  if (caller.anonymous || caller.sids === undefined || caller.sids.length === 0) return NO_SIDS;
  let sids = sidSets.get(caller.sids);
  if (sids === undefined) {
    sids = new Set(caller.sids.map(normalize));
    sidSets.set(caller.sids, sids);
  }
  return sids;
}

/** Whether `a` and `b` share a member (the smaller one is walked). */
function intersects(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  for (const member of small) if (large.has(member)) return true;
  return false;
}

function names(value: unknown, where: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v.trim() !== ''))
    throw new ConfigError(`${where} must be an array of non-empty strings`);
  const list = value.map(normalize);
  const bad = list.find((v) => /^s-\d/.test(v) && !isSid(v));
  if (bad !== undefined)
    throw new ConfigError(`${where}: "${bad}" is no SID as Windows writes one (S-1-5-21-…, decimal, no leading zeros)`);
  return list;
}

function normalize(name: string): string {
  return name.trim().toLowerCase();
}

/**
 * `DOMAIN\user` or `user@REALM`: the forms the transport hands over; `DOMAIN\Group` too, whose name may hold blanks
 * (`CORP\IDB Readers`).
 */
function isIdentity(name: string): boolean {
  return isAccountName(name) || /^[^\\@\s]+@[^\\@\s]+$/.test(name);
}

function isAccountName(name: string): boolean {
  return /^[^\\@\s]+\\[^\\@]+$/.test(name);
}

/**
 * A SID in the canonical form Windows prints and the bridge hands over (its negotiate/sid.ts): `S-1-`, a decimal
 * authority, decimal sub-authorities, no leading zeros. Other spellings are refused rather than normalized: the
 * transport never produces them, so they could only fail to match.
 */
function isSid(name: string): boolean {
  return /^s-1-(0|[1-9]\d{0,9})(-(0|[1-9]\d{0,9})){1,15}$/i.test(name);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
