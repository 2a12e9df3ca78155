// The arithmetic of the collector and the thresholds, on readings of this machine and on numbers
// whose answer is known.
import { readFileSync } from 'node:fs';
import { statfsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import t from 'tap';
import { containerCpuPercent, containerReading, cpuPercent, cpuTimes, interfaces, memory, mounts } from '../src/readings.ts';
import { ThresholdWatch } from '../src/thresholds.ts';

t.test('CPU is the busy share of the whole interval between two readings', async t => {
  const a = cpuTimes('cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 2 3 4\n');
  const b = cpuTimes('cpu  400 0 200 1200 200 0 0 0 0 0\n');
  t.same(a, { busy: 200, total: 1000 });
  // 300 user + 100 system busy out of 1000 jiffies: 40 %, however the work was spread over the interval.
  t.equal(cpuPercent(a, b), 40);
  t.equal(cpuPercent(undefined, b), null, 'one reading is no percentage');
  const live = cpuTimes(readFileSync('/proc/stat', 'utf8'));
  t.ok(live.total > live.busy && live.busy > 0, "this machine's /proc/stat reads");
});

t.test('memory is MemTotal − MemAvailable, as /proc/meminfo says', async t => {
  t.same(memory('MemTotal:       1000 kB\nMemFree:         100 kB\nMemAvailable:    250 kB\n'), { totalBytes: 1_024_000, usedBytes: 768_000 });
  const live = memory(readFileSync('/proc/meminfo', 'utf8'));
  t.ok(live.usedBytes > 0 && live.usedBytes < live.totalBytes);
});

t.test('network per interface and disk per mount agree with the kernel', async t => {
  const devices = interfaces(readFileSync('/proc/net/dev', 'utf8'));
  const lo = devices.find(d => d.device === 'lo');
  t.ok(lo, 'loopback listed');
  const sysRx = Number(readFileSync('/sys/class/net/lo/statistics/rx_bytes', 'utf8'));
  t.ok(Math.abs(sysRx - lo!.receiveBytes) < 10_000_000, 'lo received bytes as /sys counts them');
  const df = execFileSync('df', ['-P', '-B1', '/'], { encoding: 'utf8' });
  const [root] = mounts(df);
  const fs = statfsSync('/');
  const total = fs.blocks * fs.bsize;
  const used = total - fs.bavail * fs.bsize;
  t.equal(root!.mount, '/');
  t.ok(Math.abs(root!.totalBytes - total) / total < 0.01, 'size within 1 %');
  t.ok(Math.abs(root!.usedBytes - used) / total < 0.01, 'use within 1 % of the size');
});

t.test("a container's CPU and memory from two engine stats", async t => {
  const at = (usage: number, system: number) =>
    containerReading({ cpu_stats: { cpu_usage: { total_usage: usage }, system_cpu_usage: system, online_cpus: 2 }, memory_stats: { usage: 100, limit: 1000, stats: { inactive_file: 30 } } });
  // Without read times, docker stats' way: half of the host's time over two cores is one core busy, 100 %.
  t.equal(containerCpuPercent(at(0, 0), at(1e9, 2e9)), 100);
  t.equal(containerCpuPercent(undefined, at(1e9, 2e9)), null);
  // With them, the usage over the time between the reads: 1.5 s of CPU in 2 s is 75 %, whatever the host's ticks counted.
  const read = (iso: string, usage: number, system: number) => containerReading({ read: iso, cpu_stats: { cpu_usage: { total_usage: usage }, system_cpu_usage: system, online_cpus: 2 } });
  t.equal(containerCpuPercent(read('2026-12-06T08:00:00.000000000Z', 0, 0), read('2026-12-06T08:00:02.000000000Z', 1.5e9, 3e9)), 75);
  t.ok(Number.isNaN(read('0001-01-01T00:00:00Z', 0, 0).readAt), "the engine's zero time is no read time");
  t.equal(at(0, 0).memoryUsedBytes, 70, 'the inactive page cache is not counted');
});

t.test('a threshold alerts once after N samples, stays quiet in the cooldown, says normal once', async t => {
  const rule = { threshold: 80, samples: 3, cooldownMs: 60_000 };
  const w = new ThresholdWatch();
  const seen = (values: number[], from: number) => values.map((v, i) => w.observe(v, rule, from + i * 1000));
  t.same(seen([90, 90, 50, 90, 90, 50], 0), [null, null, null, null, null, null], 'fewer than 3 in a row: nothing');
  t.same(seen([90, 90, 90, 95, 99], 10_000), [null, null, 'alert', null, null], 'the third in a row alerts, once');
  t.same(seen([50, 40], 20_000), ['normal', null], 'back to normal once');
  t.same(seen([90, 90, 90, 90], 30_000), [null, null, null, null], 'crossed again within the cooldown: nothing');
  t.same(seen([90, 90, 90], 80_000), ['alert', null, null], 'after the cooldown, still above: one alert');
  const off = new ThresholdWatch();
  t.same(
    [100, 100, 100, 100].map(v => off.observe(v, { ...rule, threshold: 0 }, 0)),
    [null, null, null, null],
    '0 is off',
  );
});
