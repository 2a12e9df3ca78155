// A threshold that fires once: crossed for `samples` samples in a row it alerts, then stays quiet
// for `cooldownMs` however it flaps, and says "back to normal" once when a sample is below again
// after an alert. A threshold of 0 is off (as the peer's).

export type Verdict = 'alert' | 'normal' | null;

export interface ThresholdRule {
  threshold: number;
  samples: number;
  cooldownMs: number;
}

export class ThresholdWatch {
  #above = 0;
  #alerted = false;
  #quietUntil = 0;

  /** The verdict for one sample's value at `now` (epoch ms). */
  observe(value: number, rule: ThresholdRule, now: number): Verdict {
    if (!rule.threshold) {
      this.#above = 0;
      return null;
    }
    if (value > rule.threshold) {
      this.#above++;
      if (this.#alerted || this.#above < rule.samples || now < this.#quietUntil) return null;
      this.#alerted = true;
      this.#quietUntil = now + rule.cooldownMs;
      return 'alert';
    }
    this.#above = 0;
    if (!this.#alerted) return null;
    this.#alerted = false;
    return 'normal';
  }
}
