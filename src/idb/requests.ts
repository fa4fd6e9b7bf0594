/**
 * Open database requests (docs/contract/iidbservice.md: CreateDatabaseRequest, CloseDatabaseRequest, "A database
 * request lives by its id, not by its channel"): each is one DatabaseTransaction kept open across calls, owned by the
 * identity that opened it.
 *
 * Decisions:
 * - Looked up by id and owner together: another identity's id answers exactly like an unknown one, so its existence
 *   is not revealed.
 * - The idle clock runs only between calls: a statement that runs for minutes is not idle, and the idle time starts
 *   again when it ends. On expiry the request is forgotten first and rolled back after, so no call can slip in.
 * - When the connection that opened a request breaks, the request is rolled back at once; a clean close keeps it (a
 *   client that opens a channel per call continues it on the next one).
 * - The cap per identity counts open requests; one more is QuotaExceeded, so one client cannot hold every connection
 *   of the pool (PostgreSQL) or every write lock (SQLite).
 * - A fault inside a request leaves it open but aborted (the port refuses further statements): the client learns
 *   from the fault and closes it; CloseDatabaseRequest(commit: true) then faults instead of pretending to commit.
 */
import { IdbFault, type Caller } from './contract.ts';
import type { Database, DatabaseTransaction } from './database.ts';

interface OpenRequest {
  readonly id: string;
  readonly owner: string;
  readonly connectionId: string;
  readonly database: Database;
  readonly transaction: DatabaseTransaction;
  /** calls running on it now; the idle clock only runs at 0 */
  running: number;
  /** When the idle clock started: the request's creation, then the end of its latest call (Date.now()). */
  idleSince: number;
  /** Set while armed; it fires at most once per idle time and checks the clock then (see `expire`). */
  timer: ReturnType<typeof setTimeout> | undefined;
}

export interface DatabaseRequestsOptions {
  idleMs: number;
  maxPerIdentity: number;
  newId: () => string;
  /** Told when a request is rolled back without its owner asking (idle, connection lost); never given SQL or data. */
  onAbandoned?: (reason: 'idle' | 'connection-lost', owner: string) => void;
}

/** The owner key of a caller: names compare case-insensitively, as the roles file does. */
function ownerOf(caller: Pick<Caller, 'name' | 'anonymous'>): string {
  return caller.anonymous ? '\0anonymous' : caller.name.toLowerCase();
}

export class DatabaseRequests {
  private readonly open = new Map<string, OpenRequest>();

  constructor(private readonly options: DatabaseRequestsOptions) {}

  /** Begins a write transaction on `database` for `caller` and returns the new request id. */
  async create(caller: Caller, database: Database): Promise<string> {
    const owner = ownerOf(caller);
    let held = 0;
    for (const request of this.open.values()) if (request.owner === owner) held++;
    if (held >= this.options.maxPerIdentity) {
      throw new IdbFault(
        'QuotaExceeded',
        `You already hold ${held} open database requests, the most allowed; close one first.`,
      );
    }
    const transaction = await database.begin('write');
    const request: OpenRequest = {
      id: this.options.newId(),
      owner,
      connectionId: caller.connectionId,
      database,
      transaction,
      running: 0,
      idleSince: Date.now(),
      timer: undefined,
    };
    this.open.set(request.id, request);
    this.arm(request, this.options.idleMs);
    return request.id;
  }

  /** Runs `work` on the caller's request; UnknownDatabaseRequest when there is none under that id for this caller. */
  async use<T>(
    id: string,
    caller: Caller,
    work: (transaction: DatabaseTransaction, database: Database) => Promise<T>,
  ): Promise<T> {
    const request = this.find(id, caller);
    request.running++;
    try {
      return await work(request.transaction, request.database);
    } finally {
      request.running--;
      request.idleSince = Date.now();
      if (request.timer === undefined && this.open.get(id) === request) this.arm(request, this.options.idleMs);
    }
  }

  /** Commits or rolls back; false when the caller has no request under that id. A failed commit throws. */
  async close(id: string, caller: Caller, commit: boolean): Promise<boolean> {
    const request = this.open.get(id);
    if (request === undefined || request.owner !== ownerOf(caller)) return false;
    this.forget(request);
    if (commit) await request.transaction.commit();
    else await request.transaction.rollback();
    return true;
  }

  /** The connection a caller used is gone. Without a clean close, its requests are rolled back now. */
  async connectionClosed(connectionId: string, clean: boolean): Promise<void> {
    if (clean) return;
    const lost = [...this.open.values()].filter((r) => r.connectionId === connectionId);
    await Promise.all(lost.map((request) => this.abandon(request, 'connection-lost')));
  }

  /** Rolls back every open request (shutdown). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.open.values()].map((request) => this.forget(request).transaction.rollback()));
  }

  get size(): number {
    return this.open.size;
  }

  private find(id: string, caller: Caller): OpenRequest {
    const request = this.open.get(id);
    if (request === undefined || request.owner !== ownerOf(caller)) {
      throw new IdbFault(
        'UnknownDatabaseRequest',
        `There is no open database request ${id} of yours; it may have been closed, or rolled back after being idle.`,
      );
    }
    return request;
  }

  /**
   * A timer is not set again on every call (clearing and setting one was a few per cent of a cheap call): a call
   * only moves `idleSince`, and the timer, when it fires, sets itself again for what is left of the idle time.
   */
  private arm(request: OpenRequest, ms: number): void {
    request.timer = setTimeout(() => this.expire(request), ms);
    // A Node timer would otherwise keep a process alive that is shutting down; other runtimes have no unref.
    (request.timer as { unref?: () => void }).unref?.();
  }

  /** The timer fired: idle long enough, or armed again for the rest (a running call arms it when it ends). */
  private expire(request: OpenRequest): void {
    request.timer = undefined;
    if (this.open.get(request.id) !== request || request.running > 0) return;
    const left = request.idleSince + this.options.idleMs - Date.now();
    if (left > 0) this.arm(request, left);
    else void this.abandon(request, 'idle');
  }

  private disarm(request: OpenRequest): void {
    if (request.timer !== undefined) clearTimeout(request.timer);
    request.timer = undefined;
  }

  private forget(request: OpenRequest): OpenRequest {
    this.disarm(request);
    this.open.delete(request.id);
    return request;
  }

  private async abandon(request: OpenRequest, reason: 'idle' | 'connection-lost'): Promise<void> {
    if (this.open.get(request.id) !== request) return;
    this.forget(request);
    this.options.onAbandoned?.(reason, request.owner);
    await request.transaction.rollback();
  }
}
