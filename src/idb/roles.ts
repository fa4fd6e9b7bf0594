/**
 * Who may call what (spec/IIDBService.md "Rules users rely on", RUN.md BRIDGE_ROLES_FILE): the roles file names
 * identities and groups per role, and every operation needs a role (contract.ts REQUIRED_ROLE). Default deny.
 *
 * Decisions:
 * - The file is JSON `{"reader": [...], "writer": [...], "groups": {"name": [members]}}`. Unknown keys, a non-string
 *   member, a group that names an undefined group or itself through others, or a role entry that is neither an
 *   identity, `*`, `anonymous` nor a defined group are refused at start: a typo must not silently deny (or grant).
 *   A group may contain groups.
 * - Names compare case-insensitively, as Windows compares accounts (`CORP\Alice` is `corp\alice`); Kerberos realms
 *   are upper case by convention, so `alice@CORP.EXAMPLE` and `Alice@corp.example` are one identity here too.
 * - `*` is any authenticated identity, never the anonymous one: granting `*` must not open a bridge that runs with
 *   security mode None to everybody. `anonymous` has to be named.
 * - A writer may do what a reader may.
 * - No file: only Heartbeat (which needs no role).
 */
import { ConfigError } from '../config.ts';
import { REQUIRED_ROLE, type Caller, type OperationName } from './contract.ts';

export type Role = 'reader' | 'writer';

export interface Roles {
  /** The roles `caller` has, after groups are resolved. */
  rolesOf(caller: Pick<Caller, 'name' | 'anonymous'>): ReadonlySet<Role>;
  /** Whether `caller` may call `operation`. */
  allows(caller: Pick<Caller, 'name' | 'anonymous'>, operation: OperationName): boolean;
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
  for (const key of Object.keys(json)) if (!['reader', 'writer', 'groups'].includes(key)) throw new ConfigError(`${source}: unknown key "${key}"`);

  const groups = new Map<string, string[]>();
  if (json.groups !== undefined) {
    if (!isObject(json.groups)) throw new ConfigError(`${source}: "groups" must be an object of group name to members`);
    for (const [name, members] of Object.entries(json.groups)) {
      const key = normalize(name);
      if (key === ANY_AUTHENTICATED || key === ANONYMOUS || key === '') throw new ConfigError(`${source}: "${name}" cannot be a group name`);
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
      else if (entry === ANY_AUTHENTICATED || entry === ANONYMOUS || isIdentity(entry)) members.add(entry);
      else throw new ConfigError(`${source}: "${name}" names "${entry}", which is no group, DOMAIN\\user, user@REALM, "*" or "anonymous"`);
    }
    return members;
  };
  for (const group of groups.keys()) expand(group);
  return rolesFrom({ reader: role('reader'), writer: role('writer') });
}

function rolesFrom(members: Record<Role, ReadonlySet<string>>): Roles {
  const has = (role: Role, caller: Pick<Caller, 'name' | 'anonymous'>): boolean => {
    const set = members[role];
    if (caller.anonymous) return set.has(ANONYMOUS);
    return set.has(ANY_AUTHENTICATED) || set.has(normalize(caller.name));
  };
  const rolesOf = (caller: Pick<Caller, 'name' | 'anonymous'>): ReadonlySet<Role> => {
    const roles = new Set<Role>();
    if (has('writer', caller)) roles.add('writer').add('reader');
    else if (has('reader', caller)) roles.add('reader');
    return roles;
  };
  return {
    rolesOf,
    allows(caller, operation) {
      const needed = REQUIRED_ROLE[operation];
      return needed === 'none' || rolesOf(caller).has(needed);
    },
  };
}

function names(value: unknown, where: string): string[] {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v.trim() !== '')) throw new ConfigError(`${where} must be an array of non-empty strings`);
  return value.map(normalize);
}

function normalize(name: string): string {
  return name.trim().toLowerCase();
}

/** `DOMAIN\user` or `user@REALM`: the forms the transport hands over. */
function isIdentity(name: string): boolean {
  return /^[^\\@\s]+\\[^\\@\s]+$/.test(name) || /^[^\\@\s]+@[^\\@\s]+$/.test(name);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
