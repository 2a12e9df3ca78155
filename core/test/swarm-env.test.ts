// Environment text (dotenv syntax) and the references between project, environment and
// workload variables.
import t, { type Test } from 'tap';
import { parseEnv, resolveEnv, toEnvList } from '../src/swarm/env.ts';
import { BerthError } from '../src/errors.ts';

const fails = (t: Test, fn: () => unknown, message: string | RegExp, field = 'env') => {
  let error: unknown;
  try {
    fn();
  } catch (e) {
    error = e;
  }
  t.ok(error instanceof BerthError, 'a domain error');
  const e = error as BerthError;
  t.equal(e?.code, 'BAD_REQUEST');
  if (typeof message === 'string') t.equal(e?.message, message);
  else t.match(e?.message, message);
  t.same(e?.issues?.[0]?.path, [field], `the issue names ${field}`);
};

t.test('parseEnv reads dotenv syntax', async t => {
  const text = [
    '# a comment',
    'PLAIN=value',
    'export EXPORTED=yes',
    'SPACED = around ',
    'QUOTED="with spaces # not a comment"',
    "SINGLE='single $HOME'",
    'MULTI="line one',
    'line two"',
    'INLINE=kept # dropped comment',
    'EMPTY=',
    'URL=postgres://u:p@h:5432/db?x=1',
    '',
  ].join('\n');
  t.same(parseEnv(text), {
    PLAIN: 'value',
    EXPORTED: 'yes',
    SPACED: 'around',
    QUOTED: 'with spaces # not a comment',
    SINGLE: 'single $HOME',
    MULTI: 'line one\nline two',
    INLINE: 'kept',
    EMPTY: '',
    URL: 'postgres://u:p@h:5432/db?x=1',
  });
  t.same(parseEnv(''), {});
  t.same(parseEnv(null), {});
  t.same(parseEnv(undefined), {});
  t.same(parseEnv('A=1\r\nB=2\r\n'), { A: '1', B: '2' }, 'CRLF line ends');
  t.equal(parseEnv('constructor=1').constructor, '1', 'no inherited members');
});

t.test('parseEnv names what it cannot read', async t => {
  fails(t, () => parseEnv('GOOD=1\n1BAD=x'), 'Invalid environment variable name "1BAD" in env: use letters, digits and _, not starting with a digit');
  fails(t, () => parseEnv('MY-VAR=1'), /"MY-VAR"/);
  fails(t, () => parseEnv('A.B=1'), /"A\.B"/);
  fails(t, () => parseEnv('A=1\nMY VAR=2'), /^Invalid line 2 in env: "MY VAR" is not a KEY=value assignment/);
  fails(t, () => parseEnv('A=1\nghp_s3cretTokenPastedAlone'), 'Invalid line 2 in env: is not a KEY=value assignment (names use letters, digits and _)', 'env');
  fails(t, () => parseEnv('X-Y=1', 'buildArgs'), /in buildArgs/, 'buildArgs');
  // A line inside a multi-line quoted value is part of the value, not a line of its own.
  t.same(parseEnv('KEY="-----BEGIN KEY-----\nnot an assignment\n-----END KEY-----"\nNEXT=1'), {
    KEY: '-----BEGIN KEY-----\nnot an assignment\n-----END KEY-----',
    NEXT: '1',
  });
});

t.test('resolveEnv replaces project, environment and own references', async t => {
  const env = resolveEnv(
    [
      'DB_URL=postgres://${{project.DB_USER}}@${{environment.DB_HOST}}:5432/${{DB_NAME}}',
      'DB_NAME=app_${{environment.STAGE}}',
      'SPACES=${{ project.DB_USER }}',
      'TWICE=${{DB_NAME}}-${{DB_NAME}}',
      'LITERAL=${NOT_A_REFERENCE} $HOME {{x}}',
    ].join('\n'),
    {
      project: 'DB_USER=admin\nUNUSED=1',
      environment: 'DB_HOST=db-${{project.DB_USER}}.internal\nSTAGE=prod',
    },
  );
  t.same(env, {
    DB_URL: 'postgres://admin@db-admin.internal:5432/app_prod',
    DB_NAME: 'app_prod',
    SPACES: 'admin',
    TWICE: 'app_prod-app_prod',
    LITERAL: '${NOT_A_REFERENCE} $HOME {{x}}',
  });
  t.same(resolveEnv(null), {});
  t.same(resolveEnv('A=1'), { A: '1' }, 'no shared texts');
  t.same(resolveEnv('A=${{B}}\nB=${{C}}-x\nC=y'), { A: 'y-x', B: 'y-x', C: 'y' }, 'a referenced variable is resolved once more');
  t.same(toEnvList({ A: '1', B: 'x=y' }), ['A=1', 'B=x=y']);
});

t.test('resolveEnv names a missing or bad reference exactly', async t => {
  fails(t, () => resolveEnv('DB_URL=${{project.DB_HOST}}'), 'Environment variable DB_URL refers to ${{project.DB_HOST}}, which is not defined');
  fails(t, () => resolveEnv('X=${{environment.NOPE}}', { environment: 'OTHER=1' }), 'Environment variable X refers to ${{environment.NOPE}}, which is not defined');
  fails(t, () => resolveEnv('X=${{MISSING}}'), 'Environment variable X refers to ${{MISSING}}, which is not defined');
  fails(t, () => resolveEnv('X=${{environment.H}}', { environment: 'H=${{project.GONE}}' }), 'Environment variable H (of the environment) refers to ${{project.GONE}}, which is not defined');
  fails(t, () => resolveEnv('X=${{environment.H}}', { environment: 'H=${{OTHER}}\nOTHER=1' }), /^Environment variable H of the environment refers to \$\{\{OTHER\}\}/);
  fails(t, () => resolveEnv('X=${{server.KEY}}'), /^Environment variable X refers to \$\{\{server\.KEY\}\}, which is not a valid reference/);
  fails(t, () => resolveEnv('A=${{B}}\nB=${{A}}'), /^Environment variable [AB] refers to \$\{\{[AB]\}\}, which is nested too deeply or circular/);
  fails(t, () => resolveEnv('A=${{B}}\nB=${{C}}\nC=${{D}}\nD=1'), /nested too deeply/);
  fails(t, () => resolveEnv('BAD-NAME=1'), /"BAD-NAME"/);
  // Values never appear in the message: they are often secrets.
  let message = '';
  try {
    resolveEnv('SECRET=hunter2-${{project.NOPE}}');
  } catch (e) {
    message = (e as Error).message;
  }
  t.notMatch(message, /hunter2/);
});
