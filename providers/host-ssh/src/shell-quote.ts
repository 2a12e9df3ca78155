// An argument array as one command line for the remote user's shell: sshd hands an exec request
// to `$SHELL -c <line>`, so every argument is quoted (POSIX sh rules) and none is ever read as
// shell syntax.

const PLAIN = /^[A-Za-z0-9_\/.,:=@%+-]+$/;

/** One argument, single-quoted unless it is made only of characters no POSIX shell treats specially. */
export function quoteArg(arg: string): string {
  if (arg.includes('\0')) throw new Error('A command argument cannot contain a NUL byte');
  if (PLAIN.test(arg)) return arg;
  // Inside single quotes nothing is special but the quote itself: end the string, add an escaped quote, reopen.
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The command line that runs argv as is: argv[0] with its arguments, each quoted. */
export function commandLine(argv: readonly string[]): string {
  if (argv.length === 0 || argv[0] === '') throw new Error('A command needs a program (argv[0])');
  return argv.map(quoteArg).join(' ');
}
