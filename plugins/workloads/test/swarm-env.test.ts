// Environment text (dotenv syntax) and the references between project, environment and
// workload variables.
import t from 'tap';
import { parseEnv, resolveEnv, toEnvList } from '../src/swarm/env.ts';
import { refusals } from './refusals.ts';

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
  refusals(t, 'each unreadable text is refused as a domain error naming the field, with the message', [
    [() => parseEnv('GOOD=1\n1BAD=x'), ['env'], 'Invalid environment variable name "1BAD" in env: use letters, digits and _, not starting with a digit'],
    [() => parseEnv('MY-VAR=1'), ['env'], /"MY-VAR"/],
    [() => parseEnv('A.B=1'), ['env'], /"A\.B"/],
    [() => parseEnv('A=1\nMY VAR=2'), ['env'], /^Invalid line 2 in env: "MY VAR" is not a KEY=value assignment/],
    [() => parseEnv('A=1\nghp_s3cretTokenPastedAlone'), ['env'], 'Invalid line 2 in env: is not a KEY=value assignment (names use letters, digits and _)'],
    [() => parseEnv('X-Y=1', 'buildArgs'), ['buildArgs'], /in buildArgs/],
  ]);
  // A line inside a multi-line quoted value is part of the value, not a line of its own.
  t.same(parseEnv('KEY="-----BEGIN KEY-----\nnot an assignment\n-----END KEY-----"\nNEXT=1'), { KEY: '-----BEGIN KEY-----\nnot an assignment\n-----END KEY-----', NEXT: '1' });
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
    { project: 'DB_USER=admin\nUNUSED=1', environment: 'DB_HOST=db-${{project.DB_USER}}.internal\nSTAGE=prod' },
  );
  t.same(env, { DB_URL: 'postgres://admin@db-admin.internal:5432/app_prod', DB_NAME: 'app_prod', SPACES: 'admin', TWICE: 'app_prod-app_prod', LITERAL: '${NOT_A_REFERENCE} $HOME {{x}}' });
  t.same(resolveEnv(null), {});
  t.same(resolveEnv('A=1'), { A: '1' }, 'no shared texts');
  t.same(resolveEnv('A=${{B}}\nB=${{C}}-x\nC=y'), { A: 'y-x', B: 'y-x', C: 'y' }, 'a referenced variable is resolved once more');
  t.same(toEnvList({ A: '1', B: 'x=y' }), ['A=1', 'B=x=y']);
});

t.test('resolveEnv names a missing or bad reference exactly', async t => {
  refusals(t, 'each missing or bad reference is refused as a domain error naming env, with its message', [
    [
      () => resolveEnv('DB_URL=${{project.DB_HOST}}'),
      ['env'],
      'Invalid project environment variable: project.DB_HOST (environment variable DB_URL refers to ${{project.DB_HOST}}, which is not defined)',
    ],
    [
      () => resolveEnv('X=${{environment.NOPE}}', { environment: 'OTHER=1' }),
      ['env'],
      'Invalid environment variable: environment.NOPE (environment variable X refers to ${{environment.NOPE}}, which is not defined)',
    ],
    [() => resolveEnv('X=${{MISSING}}'), ['env'], 'Invalid service environment variable: MISSING (environment variable X refers to ${{MISSING}}, which is not defined)'],
    [
      () => resolveEnv('X=${{environment.H}}', { environment: 'H=${{project.GONE}}' }),
      ['env'],
      'Invalid project environment variable: project.GONE (environment variable H (of the environment) refers to ${{project.GONE}}, which is not defined)',
    ],
    [() => resolveEnv('X=${{environment.H}}', { environment: 'H=${{OTHER}}\nOTHER=1' }), ['env'], /^Environment variable H of the environment refers to \$\{\{OTHER\}\}/],
    [() => resolveEnv('X=${{server.KEY}}'), ['env'], /^Invalid service environment variable: server\.KEY \(environment variable X refers to \$\{\{server\.KEY\}\}, which is not a valid reference/],
    [() => resolveEnv('A=${{B}}\nB=${{A}}'), ['env'], /^Environment variable [AB] refers to \$\{\{[AB]\}\}, which is nested too deeply or circular/],
    [() => resolveEnv('A=${{B}}\nB=${{C}}\nC=${{D}}\nD=1'), ['env'], /nested too deeply/],
    [() => resolveEnv('BAD-NAME=1'), ['env'], /"BAD-NAME"/],
  ]);
  // Values never appear in the message: they are often secrets.
  let message = '';
  try {
    resolveEnv('SECRET=hunter2-${{project.NOPE}}');
  } catch (e) {
    message = (e as Error).message;
  }
  t.notMatch(message, /hunter2/);
});
