// Loaded into the Berth child by `node bench/api.ts --probe` (node --expose-gc --import):
// on SIGUSR2 it runs a full garbage collection and prints process.memoryUsage(), V8's heap
// statistics and each heap space's size on one stdout line that the bench reads. Not part
// of Berth.
import v8 from 'node:v8';

const gc = (globalThis as { gc?: () => void }).gc;
process.on('SIGUSR2', () => {
  gc?.();
  const h = v8.getHeapStatistics();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map(s => [`space:${s.space_name}`, s.physical_space_size]));
  const usage = {
    ...process.memoryUsage(),
    totalPhysical: h.total_physical_size,
    malloced: h.malloced_memory,
    peakMalloced: h.peak_malloced_memory,
    ...spaces,
  };
  process.stdout.write(`BENCH_PROBE ${JSON.stringify(usage)}\n`);
});
