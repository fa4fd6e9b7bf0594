/**
 * What a BridgeConnection queues, in arrival order: the calls, and the session events that must take effect only once
 * the calls received before them are answered (a client may pipeline them).
 */
import type { Caller } from '#idb';
import type { XmlDocument } from './binary-xml/index.ts';

/** The deferred answer to the client's End, queued behind the calls received before it. */
export const END = Symbol('End');
/** Which dispatch serves the session that begins (its via): the metadata via's (mex.ts) or the endpoint's. */
export const METADATA = Symbol('metadata via');
export const ENDPOINT = Symbol('endpoint via');

/** A call (its tree, or what the dispatch's reader made of it), or a session event. */
export type Queued = XmlDocument | object | typeof END | typeof METADATA | typeof ENDPOINT;

/** Who calls without Windows security (security mode None), and on the metadata via in any mode. */
export const anonymousCaller = (connectionId: string): Caller => ({ name: 'anonymous', anonymous: true, connectionId });
