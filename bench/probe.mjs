// Loaded into the Berth child by `node bench/api.ts --probe` (through NODE_OPTIONS:
// --expose-gc --import): on SIGUSR2 it runs a full garbage collection and prints
// process.memoryUsage(), V8's heap statistics, each heap space's size and the modules loaded so
// far (counted per package) on one stdout line that the bench reads. With
// BENCH_HEAPSNAPSHOT_DIR set, the first SIGUSR2 also writes a heap snapshot there. Not part
// of Berth. Plain JavaScript: a .ts file here would make Node load its TypeScript stripper
// (about 10 MB) into the process it measures.
import inspector from 'node:inspector/promises';
import path from 'node:path';
import v8 from 'node:v8';

const gc = globalThis.gc;
const snapshotDir = process.env.BENCH_HEAPSNAPSHOT_DIR;
let snapshotWritten = false;

/** The package a module belongs to: its node_modules package, its bundle, or the Berth workspace folder (core, plugins/x, providers/y). */
function packageOf(url) {
  const file = url.startsWith('file://') ? new URL(url).pathname : url;
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = file.slice(nm + '/node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  // A package bundled by scripts/bundle-deps.ts.
  const vendor = /\/core\/vendor\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
  if (vendor) return `bundled:${vendor[1]}`;
  const m = /\/(core|bench|plugins\/[^/]+|providers\/[^/]+)\/src\//.exec(file);
  return m ? `berth:${m[1]}` : path.basename(file);
}

/** Every script V8 has compiled from a file (Debugger.enable reports those already parsed), per package. */
async function modules() {
  const session = new inspector.Session();
  session.connect();
  const urls = new Set();
  session.on('Debugger.scriptParsed', m => {
    const url = m.params.url;
    if (url.startsWith('file://') || url.startsWith('/')) urls.add(url);
  });
  try {
    await session.post('Debugger.enable');
    await session.post('Debugger.disable');
  } finally {
    session.disconnect();
  }
  const byPackage = {};
  for (const u of urls) byPackage[packageOf(u)] = (byPackage[packageOf(u)] ?? 0) + 1;
  return { total: urls.size, byPackage };
}

process.on('SIGUSR2', () => {
  void (async () => {
    const mods = await modules();
    gc?.();
    const h = v8.getHeapStatistics();
    const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map(s => [`space:${s.space_name}`, s.physical_space_size]));
    let snapshot;
    if (snapshotDir && !snapshotWritten) {
      snapshotWritten = true;
      snapshot = v8.writeHeapSnapshot(path.join(snapshotDir, `berth-${process.pid}.heapsnapshot`));
    }
    const usage = { ...process.memoryUsage(), totalPhysical: h.total_physical_size, malloced: h.malloced_memory, peakMalloced: h.peak_malloced_memory, ...spaces };
    process.stdout.write(`BENCH_PROBE ${JSON.stringify({ usage, modules: mods, ...(snapshot ? { snapshot } : {}) })}\n`);
  })();
});
