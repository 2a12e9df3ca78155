// Operator commands that plugins contribute (`definePlugin({ commands })`): found among the
// enabled plugins, listed by `berth --help`, run without the HTTP server; a command opens the
// database only if it asks to (context.openKernel).
import { createKernel } from './kernel.ts';
import { resolveConfig } from './loader.ts';
import { loadProvider } from './provider-loader.ts';
import type { CommandContext, PluginCommand } from './plugin.ts';

/** The commands of the plugins the configuration of `env` enables. */
export async function pluginCommands(env: NodeJS.ProcessEnv): Promise<{ commands: PluginCommand[]; context: CommandContext }> {
  const { config, plugins } = await resolveConfig(env);
  const context: CommandContext = {
    env,
    config,
    openKernel: (options = {}) => createKernel({ env, ...options, headless: true, config: { logLevel: 'warn', jobs: false, ...options.config } }),
    provider: (contract, id) => loadProvider(config, contract, id),
    out: text => void process.stdout.write(text),
  };
  return { commands: plugins.flatMap(p => p.info.commands), context };
}

/** Runs the plugin command `name`; false when no enabled plugin has it. */
export async function runPluginCommand(name: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const { commands, context } = await pluginCommands(env);
  const command = commands.find(c => c.name === name);
  if (!command) return false;
  await command.run(args, context);
  return true;
}
