// Small helpers shared by the bench scripts: a free loopback port, a bounded poll, a median.
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

export const freePort = () => new Promise<number>((resolve, reject) => {
  const s = net.createServer();
  s.listen(0, '127.0.0.1', () => {
    const port = (s.address() as net.AddressInfo).port;
    s.close(() => resolve(port));
  });
  s.on('error', reject);
});

/** Polls `fn` every 25 ms until it answers something other than undefined (a throw counts as undefined). */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    await sleep(25);
  }
  throw new Error(`timed out: ${what}`);
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
