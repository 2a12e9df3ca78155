// This machine's address on its default route: what swarm mode advertises when swarmAdvertiseAddr
// is not set (a loopback address is one no node can join), and server.publicIp's answer. Read from
// the kernel's routing table, never from a service on the internet.
import { readFile } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';

/** The IPv4 address of the interface that carries the default route; '' when none does. */
export async function localRouteAddress(): Promise<string> {
  const table = await readFile('/proc/net/route', 'utf8').catch(() => '');
  const dev = table
    .split('\n')
    .slice(1)
    .map(l => l.trim().split(/\s+/))
    .find(c => c[1] === '00000000' && c[7] === '00000000')?.[0];
  const address = dev ? networkInterfaces()[dev]?.find(a => a.family === 'IPv4' && !a.internal)?.address : undefined;
  return address ?? '';
}
