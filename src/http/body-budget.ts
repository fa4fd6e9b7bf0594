/**
 * MAX_INFLIGHT_MB: the bytes of request bodies being read or worked on at once, across all requests. A request
 * reserves its Content-Length before a byte of its body is read and holds it until its answer is made; one that would
 * go over is answered 503 `overloaded` with Retry-After, its body unread. A body sent without Content-Length (chunked)
 * reserves as its buffer grows, up to MAX_BODY_MB; if the budget runs out midway it is answered 503 then, and what
 * it had read is dropped. The budget itself is a ByteBudget (src/byte-budget.ts), shared with the Node listener.
 */
import type { ByteBudget } from '../byte-budget.ts';

/** One request's share of the budget. */
export class BodyReservation {
  private reserved = 0;

  constructor(private readonly budget: ByteBudget) {}

  /** Makes the share at least `bytes`; false when the budget cannot give that much. */
  grow(bytes: number): boolean {
    const extra = bytes - this.reserved;
    if (extra <= 0) return true;
    if (!this.budget.tryReserve(extra)) return false;
    this.reserved = bytes;
    return true;
  }

  release(): void {
    this.budget.release(this.reserved);
    this.reserved = 0;
  }
}
