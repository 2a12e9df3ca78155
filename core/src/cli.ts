#!/usr/bin/env node
// berth start                                   serve the API (embedded database unless DATABASE_URL)
// berth admin create --email E --password P     create the first admin and print an API key
import { parseArgs } from 'node:util';
import { createKernel, type Kernel } from './kernel.ts';
import { ConfigError } from './config.ts';
import { BerthError } from './errors.ts';

const usage = `usage:
  berth start
  berth admin create --email <e-mail> --password <password> [--key-name <name>]`;

async function start(): Promise<void> {
  const kernel = await createKernel();
  const address = await kernel.listen();
  kernel.app.log.info(`Berth listening on ${address} (${kernel.embedded ? 'embedded database in ' + kernel.config.dataDir : 'external PostgreSQL'})`);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    kernel.app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 30_000);
    force.unref();
    kernel.stop().then(() => process.exit(0), err => {
      kernel.app.log.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

async function adminCreate(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { email: { type: 'string' }, password: { type: 'string' }, 'key-name': { type: 'string' } } });
  if (!values.email || !values.password) throw new Error(`--email and --password are required\n${usage}`);
  if (values.password.length < 8) throw new Error('--password must be at least 8 characters');
  let kernel: Kernel | undefined;
  try {
    kernel = await createKernel({ headless: true, config: { logLevel: 'warn', jobs: false } });
    const identity = kernel.container.cradle.identity;
    const signed = await identity.createFirstAdmin(values.email, values.password);
    const principal = { userId: signed.id, organizationId: signed.organizationId!, role: 'owner' as const, via: 'session' as const, credentialId: '' };
    const key = await identity.createApiKey(principal, { name: values['key-name'] ?? 'admin', organizationId: signed.organizationId! });
    process.stdout.write(`${JSON.stringify({ userId: signed.id, organizationId: signed.organizationId, apiKey: key.key })}\n`);
  } finally {
    await kernel?.stop();
  }
}

const [command, sub, ...rest] = process.argv.slice(2);
try {
  if (command === 'start') await start();
  else if (command === 'admin' && sub === 'create') await adminCreate(rest);
  else {
    process.stderr.write(`${usage}\n`);
    process.exit(command ? 2 : 0);
  }
} catch (e) {
  const msg = e instanceof ConfigError || e instanceof BerthError ? e.message : (e as Error).message ?? String(e);
  process.stderr.write(`berth: ${msg}\n`);
  process.exit(1);
}
