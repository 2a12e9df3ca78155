// server.setup: ordered, idempotent steps run over the server's SSH connection, each logged in a
// deployment of the server (type `server`, as the peer) with its command, its exit code and the
// tail of its stderr. A step first checks whether what it ensures is already in place (then it
// changes nothing), else applies, then checks again: a step is done only when its check passes.
// The first failing step fails the setup, naming the step, its exit code and its stderr. A
// server's `command` (the peer's custom setup script) runs instead of the built-in steps, in the
// same log, and its exit code is read. Scripts are constants of this file; values reach them as
// positional arguments ($1...), never spliced into the text. Every output read from the server
// goes through core's OutputFilter before anything keeps it (`docker swarm init` prints the join
// token), and the answer carries only the outcome's fields, never a step's stdout.
import { badRequest, optionalService, OutputFilter, type Cradle, type Deployer, type DeploymentRun, type EntityManager } from '@berth/core';
import type {} from '@berth/plugin-domain'; // the `serverProxies` of the container
import type { Host } from '@berth/plugin-hosts';
import { Server, type ServerRow } from './entities.ts';

/** What one step did, as the log and server.setup's answer tell it. */
export interface StepOutcome {
  step: string;
  /** The command run (the apply's when it ran, else the check's). */
  command: string;
  exitCode: number | null;
  /** unchanged: already in place; changed: applied and checked; failed: the setup stops here. */
  result: 'unchanged' | 'changed' | 'failed';
  /** The last lines of its stderr (empty when it wrote none). */
  stderr: string;
}

/** Facts the steps share (read by the first steps, used by the later ones). */
interface SetupContext {
  /** ['sudo', '-n'] for a non-root login with passwordless sudo, [] for root. */
  sudo: string[];
  /** The platform network's name (the hosts plugin's platformNetwork). */
  network: string;
  /** The server's address on the route to Berth (swarm's advertise address). */
  advertiseAddr?: string;
  /** The server is a worker of a swarm (asked before the first managerOnly step). */
  worker?: boolean;
}

interface Step {
  name: string;
  /** What it ensures, printed before it runs. */
  describe: string;
  /** Deploy servers only (a build server runs builds, not the swarm). */
  deployOnly?: boolean;
  /** A swarm manager's part: skipped on a worker (cluster.joinServer), which its manager's network and proxy reach. */
  managerOnly?: boolean;
  /** Runs as root (through sudo for a non-root login). */
  root?: boolean;
  /** Exit 0: already in place. */
  check?: string;
  /** Makes it so; its exit code is read. */
  apply: string;
  /** Positional arguments of both scripts. */
  args?: (ctx: SetupContext) => string[];
  /** A step done in the engine's API rather than by a script (the platform network, with its labels). */
  viaEngine?: (host: Host) => Promise<void>;
}

export const MAIN_DIRECTORY = '/etc/dokploy';
const DIRECTORIES = [MAIN_DIRECTORY, `${MAIN_DIRECTORY}/traefik/dynamic`, `${MAIN_DIRECTORY}/logs`, `${MAIN_DIRECTORY}/applications`, `${MAIN_DIRECTORY}/compose`, `${MAIN_DIRECTORY}/ssh`];

const APT_INSTALL = `command -v apt-get >/dev/null 2>&1 || { echo "no apt-get on this system: install $* from the distribution's packages" >&2; exit 1; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2 || { echo "apt-get update failed: check /etc/apt/sources.list (a mirror reachable from the server)" >&2; exit 1; }
apt-get install -y -q --no-install-recommends "$@" >&2`;

/** The built-in steps, in order. */
export const STEPS: Step[] = [
  {
    name: 'os',
    describe: 'the operating system and architecture',
    check: `[ "$(uname -s)" = Linux ] || { echo "not Linux: $(uname -s)" >&2; exit 1; }
. /etc/os-release 2>/dev/null; echo "\${PRETTY_NAME:-\${ID:-unknown}} $(uname -m)"`,
    apply: 'echo "Berth sets up Linux servers only" >&2; exit 1',
  },
  {
    name: 'docker',
    describe: "the Docker engine (the distribution's docker.io when missing)",
    root: true,
    check: `docker version --format '{{.Server.Version}}'`,
    apply: `if ! command -v docker >/dev/null 2>&1 || ! [ -x "$(command -v docker)" ] || ! [ -s "$(command -v docker)" ]; then
  set -- docker.io containerd runc
  ${APT_INSTALL.replace(/\n/g, '\n  ')}
fi
docker version --format '{{.Server.Version}}' >/dev/null 2>&1 || systemctl enable --now docker >&2 2>/dev/null || service docker start >&2 || true
for i in $(seq 50); do docker version --format '{{.Server.Version}}' 2>/dev/null && exit 0; sleep 0.2; done
echo "the Docker engine does not answer after its installation" >&2; exit 1`,
  },
  {
    name: 'compose', // kind-names: the Compose program's step, not the workload kind
    describe: "a Compose program (the distribution's docker-compose when missing)",
    root: true,
    check: `docker compose version --short 2>/dev/null || { [ -s "$(command -v docker-compose)" ] && docker-compose version --short; }`,
    apply: `set -- docker-compose
${APT_INSTALL}`,
  },
  {
    name: 'swarm',
    describe: "swarm mode, advertised on the server's address on the route to Berth",
    deployOnly: true,
    root: true,
    args: ctx => [ctx.advertiseAddr ?? ''],
    check: `[ "$(docker info --format '{{.Swarm.LocalNodeState}}')" = active ] || { echo "swarm: $(docker info --format '{{.Swarm.LocalNodeState}}' 2>&1)" >&2; exit 1; }`,
    apply: `[ -n "$1" ] || { echo "no address of this server routes to Berth" >&2; exit 1; }
docker swarm init --advertise-addr "$1" --listen-addr 0.0.0.0:2377`,
  },
  {
    name: 'network',
    describe: 'the platform network (an attachable overlay, labelled as Berth’s)',
    deployOnly: true,
    managerOnly: true,
    root: true,
    args: ctx => [ctx.network],
    check: `[ "$(docker network inspect --format '{{.Driver}} {{.Attachable}}' "$1")" = "overlay true" ]`,
    apply: 'engine API: create the network unless it exists, refuse one that is not Berth’s',
    viaEngine: host => host.engine().then(() => undefined),
  },
  {
    name: 'directories',
    describe: `the directories Berth uses (${DIRECTORIES.join(', ')})`,
    root: true,
    args: () => DIRECTORIES,
    check: 'for d; do [ -d "$d" ] || exit 1; done',
    apply: 'mkdir -p -- "$@" && chmod 700 -- "$1/ssh"',
  },
];

/** The script an operator can run by hand (server.getDefaultCommand): the same steps, in order. */
export function defaultCommand(serverType: string, network: string): string {
  const ctx: SetupContext = { sudo: [], network, advertiseAddr: '$(ip -o route get "${SSH_CLIENT%% *}" | sed -n "s/.* src \\([^ ]*\\).*/\\1/p")' };
  const lines = [
    '#!/bin/sh',
    '# Berth server setup: each step checks first, so running it again changes nothing.',
    'set -e',
    '[ "$(id -u)" = 0 ] || { echo "run as root (sudo sh setup.sh)" >&2; exit 1; }',
  ];
  for (const step of STEPS) {
    if (step.deployOnly && serverType === 'build') continue;
    const args = (step.args?.(ctx) ?? []).map(a => (a.startsWith('$(') ? `"${a}"` : `'${a.replace(/'/g, `'\\''`)}'`)).join(' ');
    const apply = step.viaEngine ? `docker network create --driver overlay --attachable --label berth.kind=platform "$1"` : step.apply;
    lines.push('', `# ${step.name}: ${step.describe}`, `echo "== ${step.name}"`);
    lines.push(`set -- ${args}`.trimEnd());
    lines.push(step.check ? `if ! (${step.check}\n) >/dev/null; then\n(${apply}\n)\nfi` : `(${apply}\n)`);
  }
  lines.push('', 'echo "setup done"');
  return `${lines.join('\n')}\n`;
}

const tail = (text: string, lines = 15) => text.trimEnd().split('\n').slice(-lines).join('\n');

/** What runSteps needs: the login's name, the steps, where lines go, and the outcomes to fill. */
export interface StepRun {
  username: string;
  steps: Step[];
  network: string;
  /** The address swarm advertises (asked only when the swarm step applies). */
  advertiseAddr: () => Promise<string>;
  log: (line: string) => void;
  signal?: AbortSignal;
  outcomes: StepOutcome[];
  /** Masks join tokens and the record's secrets in every output read (a fresh filter when absent). */
  filter?: OutputFilter;
}

/**
 * Runs the steps in order on the host: privilege first (root, or passwordless sudo), then each
 * step's check, its apply when the check fails, and the check again. Throws at the first failing
 * step, naming it, its exit code and the last line of its stderr.
 */
export async function runSteps(host: Pick<Host, 'run' | 'engine'>, o: StepRun): Promise<void> {
  const { log, outcomes } = o;
  const filter = o.filter ?? new OutputFilter();
  const exec = (step: string, argv: string[], shown: string) => execStep(host, o.signal, step, argv, shown, filter);
  const fail = (out: StepOutcome, why?: string): never => failed(out, log, why);
  // Privilege: root, or a login with passwordless sudo.
  const ctx: SetupContext = { sudo: [], network: o.network };
  log(`[privilege] root, or ${o.username} with passwordless sudo`);
  const id = await exec('privilege', ['id', '-u'], 'id -u');
  if (id.exitCode !== 0) fail(id);
  if (id.stdout.trim() !== '0') {
    const sudo = await exec('privilege', ['sudo', '-n', 'true'], 'sudo -n true');
    outcomes.push(sudo);
    if (sudo.exitCode !== 0) fail(sudo, `${o.username} is not root and has no passwordless sudo (add "${o.username} ALL=(ALL) NOPASSWD:ALL" to /etc/sudoers.d/, or log in as root)`);
    ctx.sudo = ['sudo', '-n'];
    log(`  ${o.username} uses sudo (exit 0)`);
  } else {
    outcomes.push(id);
    log('  root (exit 0)');
  }

  for (const [i, step] of o.steps.entries()) {
    o.signal?.throwIfAborted();
    if (step.name === 'swarm') ctx.advertiseAddr = await o.advertiseAddr();
    const args = step.args?.(ctx) ?? [];
    const script = (s: string) => [...(step.root ? ctx.sudo : []), 'sh', '-c', s, `berth-${step.name}`, ...args];
    const shown = (s: string) => `${step.root ? ctx.sudo.join(' ') + ' ' : ''}sh -c '${s}'${args.length ? ' ' + args.join(' ') : ''}`.trimStart();
    if (step.managerOnly && ctx.worker === undefined) {
      const role = await exec(step.name, [...ctx.sudo, 'docker', 'info', '--format', '{{.Swarm.LocalNodeState}} {{.Swarm.ControlAvailable}}'], 'docker info');
      ctx.worker = role.exitCode === 0 && role.stdout.trim() === 'active false';
    }
    if (step.managerOnly && ctx.worker) {
      log(`[${i + 1}/${o.steps.length}] ${step.name}: skipped: the server is a swarm worker, which its manager's ${step.name} serves`);
      continue;
    }
    log(`[${i + 1}/${o.steps.length}] ${step.name}: ${step.describe}`);
    if (step.check) {
      const checked = await exec(step.name, script(step.check), shown(step.check));
      log(`  check $ ${checked.command}\n  exit ${checked.exitCode}`);
      if (checked.exitCode === 0) {
        outcomes.push(checked);
        log(`  in place${checked.stdout.trim() ? `: ${checked.stdout.trim().split('\n').pop()}` : ''}: unchanged`);
        continue;
      }
    }
    log(`  will apply: ${step.apply.split('\n')[0]}`);
    let applied: StepOutcome & { stdout: string };
    if (step.viaEngine) {
      applied = { step: step.name, command: step.apply, exitCode: 0, result: 'changed', stderr: '', stdout: '' };
      await step.viaEngine(host).catch((e: Error) => {
        applied = { ...applied, exitCode: 1, stderr: filter.apply(e.message) };
      });
    } else applied = await exec(step.name, script(step.apply), shown(step.apply));
    outcomes.push(applied);
    log(`  apply $ ${applied.command}\n  exit ${applied.exitCode}`);
    if (applied.exitCode !== 0) fail(applied);
    if (step.check) {
      const again = await exec(step.name, script(step.check), shown(step.check));
      if (again.exitCode !== 0) fail({ ...applied, exitCode: again.exitCode, stderr: again.stderr }, `applied, but its check still fails${again.stderr ? `: ${again.stderr.split('\n').pop()}` : ''}`);
    }
    applied.result = 'changed';
    log('  changed');
  }
}

/** Runs one command of a step: its outcome as `unchanged` when it exits 0, else `failed`; its output filtered. */
async function execStep(host: Pick<Host, 'run'>, signal: AbortSignal | undefined, step: string, argv: string[], shown: string, filter: OutputFilter): Promise<StepOutcome & { stdout: string }> {
  const r = await host.run(argv, signal ? { signal } : {});
  return { step, command: filter.apply(shown), exitCode: r.code, result: r.code === 0 ? 'unchanged' : 'failed', stderr: tail(filter.apply(r.stderr)), stdout: filter.apply(r.stdout) };
}

/** A step's outcome as server.setup answers it: its fields, nothing else it carried (its stdout). */
const answered = ({ step, command, exitCode, result, stderr }: StepOutcome): StepOutcome => ({ step, command, exitCode, result, stderr });

/** Marks the outcome failed, logs its exit code and stderr, and throws naming the step. */
function failed(o: StepOutcome, log: (line: string) => void, why?: string): never {
  o.result = 'failed';
  log(`  failed: exit ${o.exitCode}${o.stderr ? `\n  stderr:\n${o.stderr.replace(/^/gm, '    ')}` : ''}`);
  throw new Error(`Setup step "${o.step}" failed (exit code ${o.exitCode})${why ? `: ${why}` : o.stderr ? `: ${o.stderr.split('\n').pop()}` : ''}`);
}

/** The deployer of target type `server`: runs the setup of the server it names. */
export class ServerSetup implements Deployer {
  readonly targetType = 'server';
  readonly #cradle: () => Cradle;
  /** The outcomes of the setups this process ran, by deploymentId (server.setup answers them). */
  readonly outcomes = new Map<string, StepOutcome[]>();

  constructor(cradle: () => Cradle) {
    this.#cradle = cradle;
  }

  /** Refuses (400) a server that no key can reach: none of its own, and no default key of its organization. */
  static async requireKey(cradle: Cradle, row: ServerRow, what: string): Promise<void> {
    if (row.sshKeyId || (await cradle.hosts.defaultKeys.has(row.organizationId))) return;
    throw badRequest(`Server ${row.name} has no SSH key: attach one (server.update with sshKeyId), or save the organization's default key (settings.saveSSHPrivateKey), before ${what}`);
  }

  async run(_action: string, run: DeploymentRun): Promise<void> {
    const row = await run.em.findOneOrFail(Server, { serverId: run.deployment.targetId });
    const outcomes: StepOutcome[] = [];
    this.outcomes.set(run.deployment.deploymentId, outcomes);
    await ServerSetup.requireKey(this.#cradle(), row, 'setup');
    const host = await this.#cradle().hosts.of(row.serverId);
    // The record's own secrets (its metrics token) are masked too.
    const filter = new OutputFilter(row);
    const exec = (step: string, argv: string[], shown: string) => execStep(host, run.signal, step, argv, shown, filter);
    const fail = (o: StepOutcome): never => failed(o, line => run.log(line));

    if (row.command.trim()) {
      run.log(`[1/1] command: the server's own setup script (server.update command), run instead of the built-in steps`);
      run.log(`  $ bash -c <command, ${row.command.length} characters>`);
      const o = await exec('command', ['bash', '-c', row.command], 'bash -c <the server command>');
      outcomes.push(o);
      if (o.stdout.trim()) run.log(tail(o.stdout, 30).replace(/^/gm, '  '));
      if (o.exitCode !== 0) fail(o);
      o.result = 'changed';
      run.log(`  exit 0`);
      return;
    }

    await runSteps(host, {
      username: row.username,
      steps: [...STEPS, ...this.#proxyStep(row)].filter(s => !(s.deployOnly && row.serverType === 'build')),
      network: this.#cradle().hosts.platformNetwork,
      advertiseAddr: () => this.#routeToBerth(host, row),
      log: line => run.log(line),
      signal: run.signal,
      outcomes,
      filter,
    });
    run.log('Setup done: every step in place');
  }

  async settle(): Promise<void> {}

  /**
   * The proxy of a deploy server, as the peer's setup starts Traefik: the active provider's service
   * made (or found) on the server's engine, through the domain plugin; none with `proxy: none` or
   * without the domain plugin.
   */
  #proxyStep(row: ServerRow): Step[] {
    const proxies = optionalService(this.#cradle(), 'serverProxies');
    const proxy = this.#cradle().config.proxy;
    if (!proxies || !proxy || proxy === 'none') return [];
    return [
      {
        name: 'proxy',
        describe: `the proxy (${proxy}), a service of the platform network with its ports published on the server`,
        deployOnly: true,
        managerOnly: true,
        root: true,
        check: `[ -n "$(docker service ls -q --filter label=berth.proxy)" ] || { echo "no proxy service on this engine" >&2; exit 1; }`,
        apply: `engine API: create or update the ${proxy} proxy service`,
        viaEngine: async () => void (await proxies.ensure(row.serverId)),
      },
    ];
  }

  /** The server's own address on its route to Berth (the source address of the SSH session's route), else its record's IP. */
  async #routeToBerth(host: Host, row: ServerRow): Promise<string> {
    const client = (await host.run(['sh', '-c', 'echo "${SSH_CLIENT%% *}"'])).stdout.trim();
    if (client) {
      const route = await host.run(['ip', '-o', 'route', 'get', client]);
      const src = /\bsrc (\S+)/.exec(route.stdout)?.[1];
      if (route.code === 0 && src) return src;
    }
    return /^[0-9.]+$|:/.test(row.ipAddress) ? row.ipAddress : '';
  }
}

/** Queues a setup of the server and waits for its end: its outcome, or a 400 naming the failed step. */
export async function runSetup(cradle: Cradle, setup: ServerSetup, row: ServerRow, em: EntityManager) {
  await ServerSetup.requireKey(cradle, row, 'setup');
  const { deployments, events } = cradle;
  let ended: { state: string; errorMessage: string | null } | undefined;
  let wake: () => void = () => {};
  let id: string | undefined;
  const off = events.on('deploymentFinished', ({ deployment }) => {
    if (deployment.deploymentId === id) {
      ended = deployment;
      wake();
    }
  });
  try {
    const queued = await deployments.enqueue(
      { targetType: 'server', targetId: row.serverId, organizationId: row.organizationId, serverId: row.serverId, action: 'setup', title: 'Setup Server', description: 'Setup Server' },
      em,
    );
    id = queued.deploymentId;
    // It may have ended before id was known.
    const now = await deployments.listFor('server', [row.serverId], em.fork() as EntityManager);
    const seen = now.get(row.serverId)?.find(d => d.deploymentId === id);
    if (seen && ['done', 'error', 'cancelled'].includes(seen.state)) ended = seen;
    while (!ended)
      await new Promise<void>(resolve => {
        wake = resolve;
      });
    const steps = (setup.outcomes.get(id) ?? []).map(answered);
    setup.outcomes.delete(id);
    if (ended.state !== 'done') throw badRequest(`${ended.errorMessage ?? `Setup ended ${ended.state}`} (its log: deployment ${id})`);
    return { deploymentId: id, status: 'done' as const, steps };
  } finally {
    off();
  }
}
