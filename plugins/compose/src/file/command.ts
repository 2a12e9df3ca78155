// A custom compose command (the spec's `command` field) split into an argument array without a
// shell: `shell-quote`'s parse does the quoting rules, and anything a shell would have acted on
// (operators, redirections, globs, comments, variables, command substitution) is refused rather
// than passed on literally. The program must be `docker compose`, `docker-compose` or
// `docker stack deploy`; flags that name files may only name paths inside the workload's
// directory (resolved against it, so `..` cannot climb out and an absolute path must lie within);
// the project (or stack) name, when the caller gives it, cannot be changed to reach another stack.
import path from 'node:path';
import { parse } from 'shell-quote';

/** Flags whose value is a path, per program. */
const COMPOSE_PATH_FLAGS = new Map([
  ['-f', '--file'],
  ['--file', '--file'],
  ['--env-file', '--env-file'],
  ['--project-directory', '--project-directory'],
]);
const STACK_PATH_FLAGS = new Map([
  ['-c', '--compose-file'],
  ['--compose-file', '--compose-file'],
]);
const PROJECT_FLAGS = new Set(['-p', '--project-name']);

export class ComposeCommandError extends Error {}

const refuse = (why: string): never => {
  throw new ComposeCommandError(`The command is refused: ${why}`);
};

function tokens(command: string): string[] {
  if (command.length > 4096) refuse('it is longer than 4096 characters');
  if (/[\n\r\0]/.test(command)) refuse('it spans several lines (one command only, no newline)');
  const out: string[] = [];
  for (const entry of parse(command, key => ({ op: 'var', name: key }))) {
    if (typeof entry === 'string') {
      if (entry.includes('`')) refuse(`"${entry}" holds a backquote, which a shell would run as a command; no shell runs here`);
      out.push(entry);
      continue;
    }
    const t = entry as { op?: string; comment?: string; pattern?: string; name?: string };
    if (t.comment !== undefined) refuse(`it holds a comment ("#${t.comment}"); no shell runs here`);
    if (t.op === 'glob') refuse(`"${t.pattern}" is a glob pattern; name the file exactly`);
    if (t.op === 'var') refuse(`it uses the variable $${t.name || '(...)'}; no shell runs here to expand it, write the value`);
    refuse(`it holds the shell operator "${t.op}"; only one program runs, with arguments, never through a shell`);
  }
  return out;
}

/** Checks that a path given to a flag lies inside the workload's directory. */
function inside(workdir: string, flag: string, value: string): void {
  if (!value) refuse(`${flag} needs a path`);
  const resolved = path.resolve(workdir, value);
  if (resolved !== workdir && !resolved.startsWith(workdir + path.sep)) refuse(`${flag} names "${value}", which is outside the workload's directory (${workdir})`);
}

/** The value of a flag at `args[i]` (`--flag value`, `--flag=value`, `-fvalue`) and how many tokens it used. */
function flagValue(args: string[], i: number, flag: string): { value: string; used: number } {
  const arg = args[i]!;
  if (arg === flag) {
    if (i + 1 >= args.length) refuse(`${flag} needs a value`);
    return { value: args[i + 1]!, used: 2 };
  }
  if (arg.startsWith(`${flag}=`)) return { value: arg.slice(flag.length + 1), used: 1 };
  return { value: arg.slice(flag.length), used: 1 };
}

/** Which known flag an argument is (exact, `--flag=...`, or a short flag with its value attached). */
function matchFlag(arg: string, flags: Iterable<string>): string | null {
  for (const flag of flags) {
    if (arg === flag || arg.startsWith(`${flag}=`)) return flag;
    if (!flag.startsWith('--') && arg.startsWith(flag) && arg.length > flag.length) return flag;
  }
  return null;
}

/**
 * The argument array of a custom command: refused (ComposeCommandError, with the reason) unless it
 * runs the compose program with file flags inside `workdir`. With `projectName`, `-p` may only
 * repeat it and `docker stack deploy` may only deploy that stack.
 */
export function parseComposeCommand(command: string, workdir: string, opts: { projectName?: string } = {}): string[] {
  if (!path.isAbsolute(workdir)) throw new Error(`The workload's directory must be an absolute path (got "${workdir}")`);
  const root = path.resolve(workdir);
  const args = tokens(command.trim());
  if (!args.length) refuse('it is empty');
  let start: number;
  let stack = false;
  if (args[0] === 'docker-compose') start = 1;
  else if (args[0] === 'docker' && args[1] === 'compose') start = 2;
  else if (args[0] === 'docker' && args[1] === 'stack') {
    if (args[2] !== 'deploy') refuse(`"docker stack ${args[2] ?? ''}" is not a deploy; the command may only run "docker stack deploy"`);
    start = 3;
    stack = true;
  } else refuse(`it runs "${args.slice(0, 2).join(' ')}"; it must start with "docker compose", "docker-compose" or "docker stack deploy"`);
  const pathFlags = stack ? STACK_PATH_FLAGS : COMPOSE_PATH_FLAGS;
  const positionals: string[] = [];
  for (let i = start!; i < args.length;) {
    const arg = args[i]!;
    const fileFlag = arg.startsWith('-') ? matchFlag(arg, pathFlags.keys()) : null;
    if (fileFlag) {
      const { value, used } = flagValue(args, i, fileFlag);
      inside(root, pathFlags.get(fileFlag)!, value);
      i += used;
      continue;
    }
    const projectFlag = !stack && arg.startsWith('-') ? matchFlag(arg, PROJECT_FLAGS) : null;
    if (projectFlag) {
      const { value, used } = flagValue(args, i, projectFlag);
      if (opts.projectName !== undefined && value !== opts.projectName) refuse(`${projectFlag} names the project "${value}"; this workload's project is "${opts.projectName}"`);
      i += used;
      continue;
    }
    if (!arg.startsWith('-')) positionals.push(arg);
    i += 1;
  }
  if (stack && opts.projectName !== undefined) {
    const name = positionals.at(-1);
    if (name !== opts.projectName) refuse(`it deploys the stack "${name ?? ''}"; this workload's stack is "${opts.projectName}"`);
  }
  return args;
}
