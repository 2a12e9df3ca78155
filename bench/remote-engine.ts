#!/usr/bin/env node
// Remote engine latency over SSH: how dockerode reaches a server's engine through the pooled
// connection of @berth/provider-host-ssh, by forwarding its unix socket (direct-streamlocal) or by
// running `docker system dial-stdio` on it, side by side with the engine's socket reached directly
// (no SSH) and with a plain command over the same connection; and an image copied (save → load) both ways. One remote test host of the kit
// (test/kit/remote-hosts.ts, root only) is started and torn down. Rounds alternate the transports.
//
//   node bench/remote-engine.ts [--rounds N] [--calls N]
import { parseArgs } from 'node:util';
import Docker from 'dockerode';
import { SshHost } from '../providers/host-ssh/src/ssh-host.ts';
import { privateRemoteHosts } from '../test/kit/remote-hosts.ts';

const { values: opt } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, calls: { type: 'string', default: '40' } } });
const rounds = Math.max(1, Number(opt.rounds)),
  calls = Math.max(1, Number(opt.calls));

const t0 = performance.now();
const set = await privateRemoteHosts(1);
const startMs = performance.now() - t0;
const h = set.hosts[0]!;
const hosts: SshHost[] = [];
try {
  const ssh = (engineTransport: 'stream-local' | 'dial-stdio') => {
    const host = new SshHost({ host: h.address, username: h.user, privateKey: h.privateKey, hostKeyFingerprint: h.hostKeyFingerprint, engineTransport });
    hosts.push(host);
    return host;
  };
  const local = ssh('stream-local'),
    stdio = ssh('dial-stdio');
  const subjects: Record<string, () => Promise<unknown>> = {};
  const direct = new Docker({ socketPath: h.socket });
  const viaLocal = await local.engine(),
    viaStdio = await stdio.engine();
  subjects['ping, engine socket directly (no SSH)'] = () => direct.ping();
  subjects['ping, stream-local'] = () => viaLocal.ping();
  subjects['ping, dial-stdio'] = () => viaStdio.ping();
  subjects['info, engine socket directly (no SSH)'] = () => direct.info();
  subjects['info, stream-local'] = () => viaLocal.info();
  subjects['info, dial-stdio'] = () => viaStdio.info();
  subjects['command `true` over the connection'] = () => local.run(['true']);
  const samples = new Map<string, number[]>(Object.keys(subjects).map(k => [k, []]));
  for (const fn of Object.values(subjects)) {
    for (let i = 0; i < 3; i++) await fn();
  } // warm up: connections made, code paths compiled
  for (let r = 0; r < rounds; r++) {
    for (const [name, fn] of Object.entries(subjects)) {
      for (let i = 0; i < calls; i++) {
        const s = performance.now();
        await fn();
        samples.get(name)!.push(performance.now() - s);
      }
    }
  }
  // An image copied from this machine's engine (docker save → load), over the connection and straight to the engine's socket.
  const image = 'berth-test/debian:12';
  const localEngine = new Docker({ socketPath: '/var/run/docker.sock' });
  const size = (await localEngine.getImage(image).inspect()).Size;
  const copy = async (to: Docker) => {
    await to
      .getImage(image)
      .remove({ force: true })
      .catch(() => undefined);
    const s = performance.now();
    const progress = await to.loadImage(await localEngine.getImage(image).get());
    await new Promise<void>((resolve, reject) => to.modem.followProgress(progress, (e: Error | null) => (e ? reject(e) : resolve())));
    return performance.now() - s;
  };
  const copies: Record<string, number[]> = { 'stream-local': [], 'engine socket directly (no SSH)': [] };
  for (let r = 0; r < 3; r++) {
    copies['stream-local']!.push(await copy(viaLocal));
    copies['engine socket directly (no SSH)']!.push(await copy(direct));
  }
  const q = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  };
  console.log(`remote host started in ${startMs.toFixed(0)} ms; ${rounds} rounds x ${calls} sequential calls each\n`);
  console.log('| call | median ms | p95 ms |');
  console.log('|---|---:|---:|');
  for (const [name, xs] of samples) console.log(`| ${name} | ${q(xs, 0.5).toFixed(2)} | ${q(xs, 0.95).toFixed(2)} |`);
  console.log(`\n| copy ${image} (${(size / 1e6).toFixed(0)} MB), save → load | median s | MB/s |`);
  console.log('|---|---:|---:|');
  for (const [name, xs] of Object.entries(copies)) console.log(`| ${name} | ${(q(xs, 0.5) / 1000).toFixed(2)} | ${(size / 1e6 / (q(xs, 0.5) / 1000)).toFixed(0)} |`);
} finally {
  await Promise.all(hosts.map(x => x.close()));
  const d0 = performance.now();
  await set.down();
  console.log(`\nremote host torn down in ${(performance.now() - d0).toFixed(0)} ms`);
}
