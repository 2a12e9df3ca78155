// What of a channel's settings must never be shown: every secret setting's value, the parts of a
// secret URL that carry its token, and their encoded forms. Provider answers and errors are
// redacted before they are quoted to a caller or kept in the delivery log.
import type { NotificationChannel } from '@berth/core';

export const REDACTED = '[redacted]';
/** How a secret setting is answered: never its value, but enough to recognise which one it is. */
export const MASK = '********';
/** How much of a provider's answer is quoted. */
export const QUOTE_MAX = 500;

/** Every string that would give a secret away, longest first. */
export function secretStrings(channel: NotificationChannel, settings: Record<string, unknown>): string[] {
  const out = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === 'string' && v.length >= 4) {
      out.add(v);
      out.add(encodeURIComponent(v));
      try {
        const url = new URL(v);
        for (const part of url.pathname.split('/')) if (part.length >= 6) out.add(part);
        for (const value of url.searchParams.values())
          if (value.length >= 6) {
            out.add(value);
            out.add(encodeURIComponent(value));
          }
        if (url.password) out.add(url.password);
      } catch {
        /* not a URL */
      }
    } else if (v && typeof v === 'object') {
      for (const inner of Object.values(v)) add(inner);
    }
  };
  for (const f of channel.secretFields) add(settings[f]);
  return [...out].sort((a, b) => b.length - a.length);
}

export function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join(REDACTED);
  return out;
}

/** A secret setting as answers show it: a URL keeps its scheme and host, anything else is masked whole. */
export function mask(value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'string') {
    try {
      const url = new URL(value);
      if (url.protocol === 'http:' || url.protocol === 'https:') return `${url.origin}/${MASK}`;
    } catch {
      /* not a URL */
    }
    return MASK;
  }
  if (typeof value === 'object') return Object.fromEntries(Object.keys(value).map(k => [k, MASK]));
  return MASK;
}
