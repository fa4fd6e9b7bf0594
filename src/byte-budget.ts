/**
 * Bytes that may be held at once, shared by everyone who holds them: MAX_INFLIGHT_MB for HTTP request bodies
 * (src/http/body-budget.ts) and BRIDGE_MAX_INFLIGHT_MB for partly received net.tcp messages (the bridge's
 * connections). A holder reserves before it reads and releases when done.
 *
 * - `tryReserve` answers at once (HTTP answers 503 when it fails); `wait` queues a reservation, first come first
 *   served, granted as others release (the bridge stops reading a sender meanwhile). Nobody jumps a queue: while
 *   someone waits, `tryReserve` fails.
 * - A reservation larger than the whole budget fits when nothing else is held, so a limit below the largest message
 *   slows such messages down instead of refusing them forever.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiting: { bytes: number; grant: () => void }[] = [];

  constructor(readonly limitBytes: number) {}

  /** Bytes reserved now. */
  get reserved(): number {
    return this.used;
  }

  /** Reservations waiting. */
  get waiters(): number {
    return this.waiting.length;
  }

  /** Whether `bytes` would be reserved now (a server may ask before it lets a client send: 100-continue). */
  fits(bytes: number): boolean {
    return this.waiting.length === 0 && this.room(bytes);
  }

  tryReserve(bytes: number): boolean {
    if (!this.fits(bytes)) return false;
    this.used += bytes;
    return true;
  }

  /** Queues a reservation; `grant` runs once it is made. The returned function withdraws it while it waits. */
  wait(bytes: number, grant: () => void): () => void {
    const entry = { bytes, grant };
    this.waiting.push(entry);
    return () => {
      const at = this.waiting.indexOf(entry);
      if (at >= 0) this.waiting.splice(at, 1);
      this.grantWaiting();
    };
  }

  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
    this.grantWaiting();
  }

  private room(bytes: number): boolean {
    return this.used + bytes <= this.limitBytes || this.used === 0;
  }

  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.room(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
      next.grant();
    }
  }
}
