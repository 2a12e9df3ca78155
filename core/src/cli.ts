#!/usr/bin/env node
// berth start                                   serve the API (embedded database unless DATABASE_URL)
// berth <command> …                             a command an enabled plugin adds (berth admin create: the auth
//                                               plugin's; berth db copy and berth restore: the backups plugin's)
// berth --help                                  these, and the enabled plugins' commands with their usage
import { createKernel, type Kernel } from './kernel.ts';
import { ConfigError } from './config.ts';
import { BerthError } from './errors.ts';
import { pluginCommands, runPluginCommand } from './commands.ts';
import { resolveConfig } from './loader.ts';

const usage = `usage:
  berth start`;

/** The kernel's usage and the enabled plugins' commands (importing the plugins, without setting them up). */
async function help(): Promise<string> {
  const { commands } = await pluginCommands(process.env);
  return [usage, ...commands.map(c => `  ${c.usage}`)].join('\n');
}

function fail(e: unknown): never {
  const msg = e instanceof ConfigError || e instanceof BerthError ? e.message : ((e as Error).message ?? String(e));
  process.stderr.write(`berth: ${msg}\n`);
  process.exit(1);
}

async function start(): Promise<void> {
  // Signals are taken from the first moment: one that arrives while the kernel starts (the
  // embedded database is already running by then) stops it once the start is complete, instead
  // of killing Berth and leaving its database behind.
  let kernel: Kernel | undefined;
  let signalled: string | undefined;
  const shutdown = (k: Kernel, signal: string) => {
    k.app.log.info({ signal }, 'shutting down');
    k.stop().then(
      () => process.exit(0),
      err => {
        k.app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  const onSignal = (signal: string) => {
    if (signalled) return;
    signalled = signal;
    setTimeout(() => process.exit(1), 30_000).unref();
    if (kernel) shutdown(kernel, signal);
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  // The start in progress: the kernel serves from its listen on, but is `kernel` only once its jobs
  // have started too (listen's last steps); a reload asked in between would find none and be lost.
  let booting: Promise<void> | undefined;
  // reloadServer: a bad config on disk is the caller's error; else in-flight requests finish, then a start with it.
  const onReload = async () => {
    await resolveConfig(process.env);
    await booting;
    const k = kernel;
    if (!k || signalled) return;
    kernel = undefined;
    booting = k.stop().then(boot);
    booting.catch(fail);
  };
  const boot = async () => {
    const starting = await createKernel({
      onReload,
      // The kernel has already stopped serving; a supervisor (systemd, Docker) may start Berth again.
      onDatabaseLost: fail,
    });
    if (!signalled) {
      const address = await starting.listen();
      starting.app.log.info(`Berth listening on ${address} (${starting.embedded ? 'embedded database in ' + starting.config.dataDir : 'external PostgreSQL'})`);
    }
    kernel = starting;
    if (signalled) shutdown(kernel, signalled);
  };
  booting = boot();
  await booting;
}

const command = process.argv[2];
try {
  if (command === 'start') await start();
  else if (command === '--help' || command === 'help' || !command) process.stdout.write(`${await help()}\n`);
  else if (!(await runPluginCommand(command, process.argv.slice(3)))) {
    process.stderr.write(`berth: unknown command ${command}\n${await help()}\n`);
    process.exit(2);
  }
} catch (e) {
  fail(e);
}
