// berth audit verify, the audit-log plugin's operator command: seals what is unsealed, walks the
// chain from its anchor and prints the verdict (JSON on one line). A break — an entry edited,
// removed or out of chain — exits 1 naming the entry; a sound chain exits 0.
import type { CommandContext, Kernel, PluginCommand } from '@berth/core';

const usage = "berth audit verify   (check the audit log's hash chain; exit 1 naming the first entry edited, removed or out of chain)";

async function audit(args: string[], context: CommandContext): Promise<void> {
  const [sub] = args;
  if (sub !== 'verify') throw new Error(`unknown subcommand ${sub ?? '(none)'}\nusage: ${usage}`);
  let kernel: Kernel | undefined;
  let problem: string | undefined;
  try {
    kernel = await context.openKernel();
    const verdict = await kernel.container.cradle.auditChain.verify();
    context.out(`${JSON.stringify(verdict)}\n`);
    if (!verdict.ok) problem = `the audit log's chain is broken: ${verdict.problem}`;
  } finally {
    await kernel?.stop();
  }
  if (problem) throw new Error(problem);
}

export const auditCommand: PluginCommand = { name: 'audit', usage, run: audit };
