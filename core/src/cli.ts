#!/usr/bin/env node
// berth start                                   serve the API (embedded database unless DATABASE_URL)
// berth admin create --email E --password P     create the first admin and print an API key
// berth db copy --from URL                      copy Berth's records from another PostgreSQL into its (new, empty) database
// berth <command> …                             a command an enabled plugin adds (berth restore: the backups plugin's)
// berth --help                                  these, and the enabled plugins' commands with their usage
import { parseArgs } from 'node:util';
import { createKernel, type Kernel } from './kernel.ts';
import { ConfigError } from './config.ts';
import { BerthError } from './errors.ts';
import { copyDatabase } from './persistence/copy.ts';
import { pluginCommands, runPluginCommand } from './commands.ts';

const usage = `usage:
  berth start
  berth admin create --email <e-mail> --password <password> [--key-name <name>]
  berth db copy --from <postgresql://…>`;

/** The kernel's usage and the enabled plugins' commands (importing the plugins, without setting them up). */
async function help(): Promise<string> {
  const { commands } = await pluginCommands(process.env);
  return [usage, ...commands.map(c => `  ${c.usage}`)].join('\n');
}

async function start(): Promise<void> {
  // Signals are taken from the first moment: one that arrives while the kernel starts (the
  // embedded database is already running by then) stops it once the start is complete, instead
  // of killing Berth and leaving its database behind.
  let kernel: Kernel | undefined;
  let signalled: string | undefined;
  const shutdown = (k: Kernel, signal: string) => {
    k.app.log.info({ signal }, 'shutting down');
    k.stop().then(() => process.exit(0), err => {
      k.app.log.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  const onSignal = (signal: string) => {
    if (signalled) return;
    signalled = signal;
    setTimeout(() => process.exit(1), 30_000).unref();
    if (kernel) shutdown(kernel, signal);
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  const starting = await createKernel({
    // The kernel has already stopped serving; a supervisor (systemd, Docker) may start Berth again.
    onDatabaseLost: error => {
      process.stderr.write(`berth: ${error.message}\n`);
      process.exit(1);
    },
  });
  if (!signalled) {
    const address = await starting.listen();
    starting.app.log.info(`Berth listening on ${address} (${starting.embedded ? 'embedded database in ' + starting.config.dataDir : 'external PostgreSQL'})`);
  }
  kernel = starting;
  if (signalled) shutdown(kernel, signalled);
}

async function adminCreate(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' }, password: { type: 'string' }, 'key-name': { type: 'string' } } });
  if (!values.email || !values.password) throw new Error(`--email and --password are required\n${usage}`);
  if (values.password.length < 8) throw new Error('--password must be at least 8 characters');
  let kernel: Kernel | undefined;
  try {
    kernel = await createKernel({ headless: true, config: { logLevel: 'warn', jobs: false } });
    const { users, apiKeys } = kernel.container.cradle;
    const signed = await users.createFirstAdmin(values.email, values.password);
    const principal = { userId: signed.id, organizationId: signed.organizationId!, role: 'owner' as const, via: 'session' as const, credentialId: '' };
    const key = await apiKeys.createApiKey(principal, { name: values['key-name'] ?? 'admin', organizationId: signed.organizationId! });
    process.stdout.write(`${JSON.stringify({ userId: signed.id, organizationId: signed.organizationId, apiKey: key.key })}\n`);
  } finally {
    await kernel?.stop();
  }
}

async function dbCopy(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { from: { type: 'string' } } });
  if (!values.from || !/^postgres(ql)?:\/\//.test(values.from)) throw new Error(`--from takes the URL of the PostgreSQL database to copy from\n${usage}`);
  let kernel: Kernel | undefined;
  try {
    // Opening the kernel creates (or migrates) the schema the records are copied into.
    kernel = await createKernel({ headless: true, config: { logLevel: 'warn', jobs: false } });
    const copied = await copyDatabase(values.from, kernel.database.pool);
    for (const { table, rows } of copied) process.stdout.write(`${table}\t${rows}\n`);
  } finally {
    await kernel?.stop();
  }
}

const [command, sub, ...rest] = process.argv.slice(2);
try {
  if (command === 'start') await start();
  else if (command === 'admin' && sub === 'create') await adminCreate(rest);
  else if (command === 'db' && sub === 'copy') await dbCopy(rest);
  else if (command === '--help' || command === 'help' || !command) process.stdout.write(`${await help()}\n`);
  else if (!(await runPluginCommand(command, process.argv.slice(3)))) {
    process.stderr.write(`berth: unknown command ${command}\n${await help()}\n`);
    process.exit(2);
  }
} catch (e) {
  const msg = e instanceof ConfigError || e instanceof BerthError ? e.message : (e as Error).message ?? String(e);
  process.stderr.write(`berth: ${msg}\n`);
  process.exit(1);
}
