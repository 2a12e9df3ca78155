// Loaded into the Berth child by `node bench/api.ts --probe` (node --expose-gc --import):
// on SIGUSR2 it runs a full garbage collection and prints process.memoryUsage() on one
// stdout line that the bench reads. Not part of Berth.
const gc = (globalThis as { gc?: () => void }).gc;
process.on('SIGUSR2', () => {
  gc?.();
  process.stdout.write(`BENCH_PROBE ${JSON.stringify(process.memoryUsage())}\n`);
});
