/**
 * BRIDGE_MAX_INFLIGHT_MB: the bytes of partly received messages across all connections. A connection reserves an
 * envelope's declared size when the size has been read, before its bytes; when the budget cannot cover it, the
 * connection stops reading (TCP pushes back on the sender) and waits its turn, first come first served, as WCF's
 * quotas make a sender wait. Reservations end when the envelope is complete or the connection is over, and a
 * message that stops arriving is ended by the connection's message time-out, so waiting always ends.
 *
 * An envelope larger than the whole budget is admitted when nothing else is reserved (MAX_MESSAGE_MB may exceed
 * BRIDGE_MAX_INFLIGHT_MB), so every message the framing accepts can be received.
 */
export class MessageBudget {
  private used = 0;
  private readonly waiting: { bytes: number; grant: () => void }[] = [];

  constructor(readonly limitBytes: number) {}

  /** Bytes reserved now. */
  get reserved(): number {
    return this.used;
  }

  /** Connections waiting for a reservation. */
  get waiters(): number {
    return this.waiting.length;
  }

  /** Reserves at once if the budget allows and nobody waits before us. */
  tryReserve(bytes: number): boolean {
    if (this.waiting.length > 0 || !this.fits(bytes)) return false;
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
    this.used -= bytes;
    this.grantWaiting();
  }

  private fits(bytes: number): boolean {
    return this.used + bytes <= this.limitBytes || this.used === 0;
  }

  private grantWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
      next.grant();
    }
  }
}
