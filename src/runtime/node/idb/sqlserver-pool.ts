/**
 * A bounded pool of tedious connections for the SQL Server adapter: at most `max` connections, each lent to one
 * database request (a transaction) at a time; callers beyond the bound wait in order, up to `acquireTimeoutMs`.
 *
 * Decisions:
 * - A connection that ended (socket closed, server gone, a fatal error) is dropped, never lent again; one given back
 *   as `broken` (its transaction state is unknown: a rollback that failed, a cancel that did not finish) is closed.
 *   A fresh one is opened for the next caller, so the pool heals after a server restart.
 * - Idle connections are kept (SQL Server logins are not free) and closed after `idleMs` unused.
 * - Opening is tedious' own (TLS negotiation, login); its errors reach the caller, the pool slot is freed.
 */
import './sqlserver-tedious.ts';
import { Connection, type ConnectionConfiguration } from 'tedious';

export interface PoolOptions {
  config: ConnectionConfiguration;
  max: number;
  acquireTimeoutMs: number;
  idleMs?: number;
}

interface Idle {
  connection: Connection;
  timer: NodeJS.Timeout;
}

export class ConnectionPool {
  private readonly idle: Idle[] = [];
  private readonly waiting: { grant: () => void; timer: NodeJS.Timeout }[] = [];
  /** Connections lent out or being opened. */
  private busy = 0;
  private closed = false;
  private readonly ended = new WeakSet<Connection>();

  constructor(private readonly options: PoolOptions) {}

  /** A logged-in connection with no request running; give it back with `release`. */
  async acquire(): Promise<Connection> {
    if (this.closed) throw new Error('The database connection pool is closed.');
    for (;;) {
      const reused = this.idle.pop();
      if (reused === undefined) break;
      clearTimeout(reused.timer);
      if (!this.ended.has(reused.connection)) {
        this.busy++;
        return reused.connection;
      }
    }
    if (this.busy >= this.options.max) {
      await this.wait();
      return this.acquire();
    }
    this.busy++;
    try {
      return await this.open();
    } catch (error) {
      this.busy--;
      this.next();
      throw error;
    }
  }

  /** Gives a connection back; `broken` closes it instead of keeping it. */
  release(connection: Connection, broken = false): void {
    this.busy--;
    if (broken || this.closed || this.ended.has(connection)) connection.close();
    else {
      const timer = setTimeout(() => this.drop(connection), this.options.idleMs ?? 300_000);
      timer.unref();
      this.idle.push({ connection, timer });
    }
    this.next();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) {
      clearTimeout(w.timer);
      w.grant();
    }
    for (const { connection, timer } of this.idle.splice(0)) {
      clearTimeout(timer);
      connection.close();
    }
  }

  private drop(connection: Connection): void {
    const at = this.idle.findIndex((i) => i.connection === connection);
    if (at >= 0) this.idle.splice(at, 1);
    connection.close();
  }

  private next(): void {
    if (this.busy < this.options.max || this.idle.length > 0) {
      const w = this.waiting.shift();
      if (w) {
        clearTimeout(w.timer);
        w.grant();
      }
    }
  }

  private wait(): Promise<void> {
    return new Promise((resolve, reject) => {
      const entry = {
        grant: () => (this.closed ? reject(new Error('The database connection pool is closed.')) : resolve()),
        timer: setTimeout(() => {
          const at = this.waiting.indexOf(entry);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(
            new PoolTimeoutError(
              `All ${this.options.max} database connections stayed busy for ${this.options.acquireTimeoutMs} ms.`,
            ),
          );
        }, this.options.acquireTimeoutMs),
      };
      this.waiting.push(entry);
    });
  }

  private open(): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const connection = new Connection(this.options.config);
      let settled = false;
      const onEnd = () => this.ended.add(connection);
      connection.on('end', onEnd);
      // tedious emits 'error' for a broken socket outside any request; the connection is then unusable.
      connection.on('error', onEnd);
      connection.connect((error) => {
        if (settled) return;
        settled = true;
        if (error) {
          connection.close();
          reject(error);
        } else resolve(connection);
      });
    });
  }
}

export class PoolTimeoutError extends Error {
  override name = 'PoolTimeoutError';
}
