// berth setup-host, the server plugin's operator command, which scripts/start.sh runs before Berth
// serves (unless BERTH_SETUP_HOST=0): the machine Berth runs on is prepared by the same steps as a
// server — the operating system checked, the Docker engine (the distribution's docker.io when
// missing, never `curl | sh`), a Compose program (the distribution's docker-compose) and swarm mode,
// advertised on swarmAdvertiseAddr, else on the address of the default route's interface. Each step
// prints what it ensures before it runs, its commands with their exit codes, and its result. The
// platform network is Berth's to make when it first uses the engine, as it always was.
// Not root (and no passwordless sudo), it applies nothing: it prints each step whose check fails
// and the command that fixes it, and exits 0, so that start.sh serves anyway. A step that fails
// as root exits 1 with the step named (start.sh then says so and serves anyway).
import { userInfo } from 'node:os';
import { redactOutput, type CommandContext, type PluginCommand } from '@berth/core';
import { localRouteAddress } from '@berth/plugin-hosts';
import { runSteps, STEPS, type StepOutcome } from './setup.ts';

const usage = 'berth setup-host                  prepare this machine as server.setup prepares a server (Docker engine, Compose program, swarm mode)';

/** The steps this machine takes: the platform network and /etc/dokploy are not Berth's needs here. */
export const LOCAL_STEPS = STEPS.filter(s => ['os', 'docker', 'compose', 'swarm'].includes(s.name)); // kind-names: the Compose program's step, not the workload kind

const FIX = 'sudo bash scripts/start.sh (or, once, sudo node core/src/cli.js setup-host)';

async function setupHost(args: string[], context: CommandContext): Promise<void> {
  if (args.length) throw new Error(`berth setup-host takes no arguments\nusage: ${usage}`);
  const host = await (await context.provider('host', 'local')).connect(null);
  const config = context.config as { swarmAdvertiseAddr?: string; platformNetwork?: string };
  const username = userInfo().username;
  const outcomes: StepOutcome[] = [];
  const say = (line: string) => context.out(`[setup-host] ${line}\n`);
  try {
    await runSteps(host, {
      username,
      steps: LOCAL_STEPS,
      network: config.platformNetwork ?? '',
      advertiseAddr: async () => config.swarmAdvertiseAddr || (await localRouteAddress()) || '127.0.0.1',
      log: line => line.split('\n').forEach(say),
      outcomes,
    });
    say(`this machine is ready: ${outcomes.filter(o => o.result === 'changed').length} step(s) changed, the rest in place`);
  } catch (e) {
    const privilege = outcomes.at(-1)?.step === 'privilege' || outcomes.length === 0;
    if (!privilege) {
      say(`${(e as Error).message}: deploys that need it will fail until it is fixed; Berth serves anyway`);
      process.exitCode = 1;
      return;
    }
    // Not root: nothing is applied, only what is missing said.
    say(`${username} is not root and has no passwordless sudo: nothing is installed; checking what is missing`);
    let missing = 0;
    for (const step of LOCAL_STEPS) {
      if (!step.check) continue;
      const checked = await host.run(['sh', '-c', step.check, `berth-${step.name}`]);
      if (checked.code === 0) say(`${step.name}: in place`);
      else {
        missing++;
        const why = redactOutput(checked.stderr).trim().split('\n').pop();
        say(`${step.name}: missing (${step.describe})${why ? `: ${why}` : ''}`);
      }
    }
    say(missing ? `${missing} step(s) missing; the fix: ${FIX}` : 'nothing is missing');
  } finally {
    await host.close();
  }
}

export const setupHostCommand: PluginCommand = { name: 'setup-host', usage: usage.replace(/\s{2,}.*$/, ''), run: setupHost };
