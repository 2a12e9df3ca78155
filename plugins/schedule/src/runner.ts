// One run of a schedule, as a deployment of the schedule target (the deploy queue gives it its
// record, log, hard timeout, cancellation, and marks it error at boot when Berth died while it
// ran). Where it runs is the schedule's type:
// - a workload's: the command, run by the chosen shell inside a running container of the workload
//   (found by Berth's owner labels on the workload's host; a stack's service by the engine's own
//   labels), through the engine's exec API with an argument array — the user's command is the
//   payload and runs inside the container only;
// - a server's: the script (or the command when it has none) over the server's pooled SSH
//   connection, as its login: `hosts.of(serverId).run([shell, '-c', script])`;
// - this machine's: the same on this machine, while the host access policy allows it.
// A run that fails, times out or dies with the process emits scheduleFailed (settle), in the
// transaction that records its end.
import { Writable } from 'node:stream';
import type Docker from 'dockerode';
import type { Cradle, Deployer, DeploymentRun, EntityManager, EventBus } from '@berth/core';
import { ID_LABEL, ORGANIZATION_LABEL, hostAccessRefused, type WorkloadRef } from '@berth/plugin-workloads';
import { Schedule, type ScheduleRow } from './entities.ts';
import { RUN_ACTIONS, SCHEDULE_TARGET, type ScheduleStore } from './service.ts';
import { SERVER_TYPE, THIS_MACHINE_TYPE, WORKLOAD_TYPES } from './schemas.ts';

/** Containers Berth starts for a record's own work (restores, checks): never a workload's running container. */
const HELPER_LABEL = 'berth.helper';
/** The engine's labels naming a container's service: Compose's, and Swarm's (a stack's is `<stack>_<service>`). */
const COMPOSE_SERVICE_LABEL = 'com.docker.compose.service';
const SWARM_SERVICE_LABEL = 'com.docker.swarm.service.name';
/** The most output one run writes to its log; the rest is cut (the log says so). */
const LOG_LIMIT = 1 << 20;

/** The policy's refusal of schedules on this machine, naming the key that allows them; null when it does. */
export function thisMachineRefusal(cradle: Pick<Cradle, 'config'>, field = 'scheduleType') {
  return cradle.config.hostAccess.hostSchedules
    ? null
    : hostAccessRefused(field, 'schedules on this machine (dokploy-server) are off on this instance (allowed by the config key hostAccess.hostSchedules)');
}

/** Splits output into the log's lines, up to LOG_LIMIT bytes. */
class LineLog {
  readonly #log: (line: string) => void;
  #partial = new Map<string, string>();
  #written = 0;
  #cut = false;

  constructor(log: (line: string) => void) {
    this.#log = log;
  }

  write(stream: string, chunk: string): void {
    const lines = ((this.#partial.get(stream) ?? '') + chunk).split('\n');
    this.#partial.set(stream, lines.pop()!);
    for (const line of lines) this.#line(line);
  }

  /** A writable stream of one of the program's outputs. */
  sink(stream: string): Writable {
    return new Writable({
      write: (chunk: Buffer, _enc, done) => {
        this.write(stream, chunk.toString('utf8'));
        done();
      },
    });
  }

  end(): void {
    for (const rest of this.#partial.values()) if (rest) this.#line(rest);
    this.#partial.clear();
  }

  #line(line: string): void {
    if (this.#cut) return;
    this.#written += line.length + 1;
    if (this.#written > LOG_LIMIT) {
      this.#cut = true;
      this.#log(`… the output goes on past ${LOG_LIMIT} bytes: the rest is not logged`);
      return;
    }
    this.#log(line);
  }
}

/** Why a shell's exit says the program was not run, for the error. */
const notRun = (code: number | null, shell: string, where: string) => (code === 126 || code === 127 ? ` (is ${shell} in ${where}? sh is in more images than bash)` : '');

export class ScheduleDeployer implements Deployer {
  readonly targetType = SCHEDULE_TARGET;
  readonly #cradle: () => Cradle;
  readonly #store: ScheduleStore;
  readonly #events: () => EventBus;

  constructor(o: { cradle: () => Cradle; store: ScheduleStore; events: () => EventBus }) {
    this.#cradle = o.cradle;
    this.#store = o.store;
    this.#events = o.events;
  }

  async run(action: string, run: DeploymentRun): Promise<void> {
    const row = await run.em.findOne(Schedule, { scheduleId: run.deployment.targetId });
    if (!row) throw new Error('The schedule is gone');
    if (action === RUN_ACTIONS.catchUp && run.deployment.description) run.log(run.deployment.description);
    if (WORKLOAD_TYPES.includes(row.scheduleType)) return this.#inContainer(row, run);
    if (row.scheduleType === SERVER_TYPE || row.scheduleType === THIS_MACHINE_TYPE) return this.#onHost(row, run);
    throw new Error(`Unknown scheduleType "${row.scheduleType}"`);
  }

  /** A failed run (its error, its timeout, Berth stopping while it ran) is announced; a cancelled one is not. */
  async settle(targetId: string, outcome: 'error' | 'cancelled', reason: string, em: EntityManager): Promise<void> {
    if (outcome !== 'error') return;
    const row = await em.findOne(Schedule, { scheduleId: targetId });
    if (!row) return;
    await this.#events().emitDurable('scheduleFailed', { organizationId: row.organizationId, scheduleId: row.scheduleId, name: row.name, error: reason, at: new Date().toISOString() }, em);
  }

  async #inContainer(row: ScheduleRow, run: DeploymentRun): Promise<void> {
    const { hosts, workloads } = this.#cradle();
    const workload = await this.#store.workloadOf(row, run.em);
    const label = workloads.kind(row.scheduleType)?.label ?? row.scheduleType;
    if (!workload) throw new Error(`The ${label} this schedule runs in is gone`);
    const docker = await (await hosts.of(workload.serverId)).engine();
    const container = await hosts.call(`list the containers of ${workload.appName}`, () => runningContainer(docker, workload, row.serviceName || null));
    const what = `${label} ${workload.appName}${row.serviceName ? ` (service ${row.serviceName})` : ''}`;
    if (!container) throw new Error(`No container of ${what} is running${workload.serverId ? ` on server ${workload.serverId}` : ' on this machine'}: deploy or start it first`);
    run.log(`Running the command with ${row.shellType} in container ${container.name} (${container.id.slice(0, 12)}) of ${what}`);
    const code = await hosts.call(`run the command in container ${container.name}`, () => execLogged(docker, container.id, [row.shellType, '-c', row.command], run));
    if (code !== 0) throw new Error(`The command exited with ${code}${notRun(code, row.shellType, 'the container')}`);
    run.log('The command ended with exit code 0');
  }

  async #onHost(row: ScheduleRow, run: DeploymentRun): Promise<void> {
    const cradle = this.#cradle();
    if (row.scheduleType === THIS_MACHINE_TYPE) {
      const refused = thisMachineRefusal(cradle);
      if (refused) throw new Error(refused.message);
    }
    const serverId = await this.#store.hostOf(row, run.em);
    const where = serverId ? `server ${serverId}` : 'this machine';
    const host = await cradle.hosts.of(serverId);
    const script = row.script || row.command;
    run.log(`Running the ${row.script ? 'script' : 'command'} with ${row.shellType} on ${where}`);
    const result = await host.run([row.shellType, '-c', script], { signal: run.signal });
    const lines = new LineLog(line => run.log(line));
    lines.write('out', result.stdout);
    lines.write('err', result.stderr);
    lines.end();
    if (result.code !== 0)
      throw new Error(`The ${row.script ? 'script' : 'command'} ${result.code === null ? `was ended by ${result.signal}` : `exited with ${result.code}`}${notRun(result.code, row.shellType, where)}`);
    run.log('The script ended with exit code 0');
  }
}

/** A running container of the workload (and of its service `serviceName`, when given), by Berth's owner labels; null when none runs. */
async function runningContainer(docker: Docker, workload: WorkloadRef, serviceName: string | null): Promise<{ id: string; name: string } | null> {
  const found = await docker.listContainers({ filters: { label: [`${ID_LABEL}=${workload.id}`, `${ORGANIZATION_LABEL}=${workload.organizationId}`], status: ['running'] } });
  const candidates = found
    .filter(c => !c.Labels?.[HELPER_LABEL])
    .filter(c => !serviceName || c.Labels?.[COMPOSE_SERVICE_LABEL] === serviceName || [serviceName, `${workload.appName}_${serviceName}`].includes(c.Labels?.[SWARM_SERVICE_LABEL] ?? ''))
    .sort((a, b) => a.Created - b.Created);
  const first = candidates[0];
  return first ? { id: first.Id, name: (first.Names?.[0] ?? first.Id).replace(/^\//, '') } : null;
}

/** Runs argv in the container with its output in the run's log as it comes; answers the exit code. */
async function execLogged(docker: Docker, containerId: string, cmd: string[], run: DeploymentRun): Promise<number> {
  const exec = await docker.getContainer(containerId).exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({});
  const lines = new LineLog(line => run.log(line));
  await new Promise<void>((resolve, reject) => {
    docker.modem.demuxStream(stream, lines.sink('out'), lines.sink('err'));
    const abort = () => {
      stream.destroy();
      reject(run.signal.reason);
    };
    const done = () => {
      run.signal.removeEventListener('abort', abort);
      resolve();
    };
    run.signal.addEventListener('abort', abort, { once: true });
    stream.on('end', done);
    stream.on('close', done);
    stream.on('error', reject);
  });
  lines.end();
  // The stream can end a moment before the engine records the exit code.
  let info = await exec.inspect();
  for (let i = 0; info.Running && i < 250; i++) {
    await new Promise(r => setTimeout(r, 20));
    info = await exec.inspect();
  }
  return info.ExitCode ?? -1;
}

declare module '@berth/core' {
  interface BerthEvents {
    /** A schedule's run failed (its error, its timeout, Berth stopping while it ran) or could not be queued. */
    scheduleFailed: { organizationId: string; scheduleId: string; name: string; error: string; at: string };
  }
}
