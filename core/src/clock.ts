// The time as the kernel's services read it: the system's, or a test's (core/src/testing.ts's
// manualClock), so what waits on time is tested by moving the clock, not by racing it.
export interface Clock {
  /** Milliseconds since the epoch, as Date.now(). */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
