/**
 * MAX_INFLIGHT_MB: the bytes of request bodies being read or worked on at once, across all requests. A request
 * reserves its Content-Length before a byte of its body is read and holds it until its answer is made; one that would
 * go over is answered 503 `overloaded` with Retry-After, its body unread. A body sent without Content-Length (chunked)
 * reserves as its buffer grows, up to MAX_BODY_MB; if the budget runs out midway it is answered 503 then, and what
 * it had read is dropped.
 */
export class InflightBudget {
  private used = 0;

  constructor(readonly limitBytes: number) {}

  /** Bytes reserved right now (the `http_inflight_body_bytes` gauge). */
  get bytes(): number {
    return this.used;
  }

  /** Whether `bytes` would fit now (a server may ask before it lets a client send its body: 100-continue). */
  fits(bytes: number): boolean {
    return this.used + bytes <= this.limitBytes;
  }

  tryReserve(bytes: number): boolean {
    if (!this.fits(bytes)) return false;
    this.used += bytes;
    return true;
  }

  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }
}

/** One request's share of the budget. */
export class BodyReservation {
  private reserved = 0;

  constructor(private readonly budget: InflightBudget) {}

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
