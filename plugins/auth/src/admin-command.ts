// berth admin create, the auth plugin's operator command: the first admin of a scripted install,
// with an API key printed once (JSON on one line). It opens the database itself; no HTTP server.
import { parseArgs } from 'node:util';
import { removeSetupToken, roleGrants, type CommandContext, type Kernel, type PluginCommand } from '@berth/core';

const usage = 'berth admin create --email <e-mail> --password <password> [--key-name <name>]';

async function adminCreate(args: string[], context: CommandContext): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'create') throw new Error(`unknown subcommand ${sub ?? '(none)'}\nusage: ${usage}`);
  const { values } = parseArgs({ args: rest, options: { email: { type: 'string' }, password: { type: 'string' }, 'key-name': { type: 'string' } } });
  if (!values.email || !values.password) throw new Error(`--email and --password are required\nusage: ${usage}`);
  if (values.password.length < 8) throw new Error('--password must be at least 8 characters');
  let kernel: Kernel | undefined;
  try {
    kernel = await context.openKernel();
    const { users, apiKeys } = kernel.container.cradle;
    const signed = await users.createFirstAdmin(values.email, values.password);
    removeSetupToken(kernel.config.dataDir);
    const principal = { userId: signed.id, organizationId: signed.organizationId!, role: 'owner' as const, grants: roleGrants('owner'), via: 'session' as const, credentialId: '' };
    const key = await apiKeys.createApiKey(principal, { name: values['key-name'] ?? 'admin', organizationId: signed.organizationId! });
    context.out(`${JSON.stringify({ userId: signed.id, organizationId: signed.organizationId, apiKey: key.key })}\n`);
  } finally {
    await kernel?.stop();
  }
}

export const adminCommand: PluginCommand = { name: 'admin', usage, run: adminCreate };
