#!/usr/bin/env node
// Deploy latency: the time from `application.deploy` to the new task running, for a prebuilt
// local image, side by side with a raw `docker service create` of the same image in the same
// run. Berth runs as a child process started like scripts/start.sh (compiled build, production
// flags) on a PostgreSQL database the bench creates and drops. Rounds alternate Berth and raw.
//
//   node bench/deploy.ts [--rounds N] [--settle SECONDS] [--json FILE]
//
// --settle sets BERTH_DEPLOY_SETTLE (how long a new task must keep running before Berth says done;
// Berth's default is 2 s). 0 measures Berth's own overhead against the raw engine.
//
// Berth's time: POST application.deploy → deployment.one reports `done` (Berth only says done
// once Swarm reports the new task running). Raw time: `docker service create -d` (the CLI) →
// the engine lists a task of the service in state running. Both are polled every 25 ms.
// Everything it creates (services, database, data dir) is removed, also on failure.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { parseArgs, promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import Docker from 'dockerode';
import { buildBerth, cleanUpBerths, median, removeServices, runBench, secondsRow, startBerth, timeDeploy, until } from './util.ts';

const run = promisify(execFile);
const IMAGE = 'berth-test/busybox:1';
const { values: opt } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, settle: { type: 'string' }, json: { type: 'string' } } });
const rounds = Math.max(1, Number(opt.rounds));
const docker = new Docker();
const suffix = randomBytes(3).toString('hex');
const services: string[] = [];

async function cleanUp() {
  await cleanUpBerths();
  await removeServices(services);
}

async function main() {
  buildBerth();
  // The proxy as an operator's environment has it (Berth's default unless BERTH_PROXY is set).
  const berth = await startBerth('deploy', {}, { BERTH_PROXY: process.env.BERTH_PROXY, ...(opt.settle !== undefined ? { BERTH_DEPLOY_SETTLE: opt.settle } : {}) });
  const { environment } = await berth.call('project.create', { name: 'bench' });

  const berthMs: number[] = [];
  const rawMs: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const appName = `bench-berth-${suffix}-${i}`;
    services.push(appName);
    berthMs.push((await timeDeploy(berth, { name: `bench-${i}`, appName, environmentId: environment.environmentId, image: IMAGE })).ms);

    // Raw docker service create of the same image and command
    const name = `bench-raw-${suffix}-${i}`;
    services.push(name);
    const t0 = performance.now();
    await run('docker', ['service', 'create', '-d', '--quiet', '--name', name, IMAGE, 'sleep', '3600']);
    await until('the raw task to run', async () => {
      const tasks = (await docker.listTasks({ filters: { service: [name] } })) as { Status?: { State?: string } }[];
      return tasks.some(t => t.Status?.State === 'running') ? true : undefined;
    });
    rawMs.push(performance.now() - t0);
  }

  const b = median(berthMs) / 1000;
  const r = median(rawMs) / 1000;
  const aim = 1.5 * r + 0.3;
  const lines = [
    `Deploy of a prebuilt local image (${IMAGE}), ${rounds} rounds, BERTH_DEPLOY_SETTLE=${opt.settle ?? 'default (2)'}:`,
    '',
    '| path | median | min | max |',
    '|---|---|---|---|',
    secondsRow('Berth: application.deploy → task running (status done)', berthMs),
    secondsRow('raw: docker service create -d → task running', rawMs),
    '',
    `Aim: Berth ≤ 1.5 × raw + 0.3 s = ${aim.toFixed(2)} s → ${b <= aim ? 'met' : 'MISSED'} (Berth/raw = ${(b / r).toFixed(2)}×)`,
  ];
  console.log(lines.join('\n'));
  if (opt.json) writeFileSync(opt.json, JSON.stringify({ berthMs, rawMs, rounds }, null, 2));
  await berth.stop();
}

runBench('bench/deploy', main, cleanUp, 15 * 60_000);
