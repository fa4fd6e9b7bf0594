/**
 * Memory on the way in, for one connection: the envelope being received reserves its declared size in the server's
 * ByteBudget before its bytes are read, and must arrive whole within the message time-out from its size on.
 *
 * - When the budget is spent, the connection stops reading until the reservation is granted (the sender waits).
 * - A reservation still waiting when the message time-out ends is refused as ServerTooBusy; an envelope that was
 *   granted its bytes but did not arrive in time is a MessageTimeout. The connection decides what either means.
 */
import type { ByteBudget } from '#idb';

export type EnvelopeTimeout = { reason: 'ServerTooBusy' | 'MessageTimeout'; size: number };

export interface EnvelopeBudgetOptions {
  budget: ByteBudget;
  messageTimeoutMs: number;
  /** Waiting for the budget started (true) or ended (false): reading stops meanwhile. */
  waiting(waiting: boolean): void;
  timedOut(timeout: EnvelopeTimeout): void;
}

export class EnvelopeBudget {
  /** The envelope being received: its size, reservation (0 while waiting for one), time-out, withdrawal of a wait. */
  private envelope:
    | { size: number; reserved: number; timer: ReturnType<typeof setTimeout>; withdraw?: () => void }
    | undefined;

  constructor(private readonly options: EnvelopeBudgetOptions) {}

  /** An envelope of `size` bytes has begun (its size was read); nothing happens while one is already budgeted. */
  begin(size: number): void {
    if (this.envelope !== undefined) return;
    const { budget, messageTimeoutMs } = this.options;
    const timer = setTimeout(() => {
      const waited = this.envelope?.reserved === 0;
      this.end();
      this.options.timedOut({ reason: waited ? 'ServerTooBusy' : 'MessageTimeout', size });
    }, messageTimeoutMs);
    timer.unref?.();
    const envelope: NonNullable<EnvelopeBudget['envelope']> = { size, reserved: 0, timer };
    this.envelope = envelope;
    if (budget.tryReserve(size)) {
      envelope.reserved = size;
      return;
    }
    this.options.waiting(true);
    envelope.withdraw = budget.wait(size, () => {
      envelope.reserved = size;
      envelope.withdraw = undefined;
      this.options.waiting(false);
    });
  }

  /** The envelope arrived whole, or the connection is over: its reservation goes back to the budget. */
  end(): void {
    const envelope = this.envelope;
    if (envelope === undefined) return;
    this.envelope = undefined;
    clearTimeout(envelope.timer);
    if (envelope.withdraw !== undefined) {
      envelope.withdraw();
      this.options.waiting(false);
    }
    if (envelope.reserved > 0) this.options.budget.release(envelope.reserved);
  }
}
