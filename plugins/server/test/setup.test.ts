// server.setup, validate, security, publicIp, getServerTime, getDefaultCommand, setupMonitoring and
// getServerMetrics through the real kernel, against a real remote host of the kit (its own sshd,
// engine, users and sudoers): setup's steps with their real exit codes in the server's deployment
// log, as root and as a sudo user, a failing step named, a custom command's exit code read, a
// second setup changing nothing; each validate code provoked on the host; the effective SSH
// configuration read through an included file.
import { execFileSync } from 'node:child_process';
import t from 'tap';
import { asValue } from '@berth/core';
import { addMember, canRun, freePort, manualClock, otherOrganization, signUpAdmin, startTestServer, waitFor, TEST_CADDY_IMAGE, type Client } from '@berth/core/testing';
import { inHost, privateRemoteHosts, remoteHostsMissing, type RemoteHost } from '@berth/test/remote-hosts';

const issueFields = (body: { issues?: { path: string[] }[] }) => (body.issues ?? []).map(i => i.path.join('.'));

async function storedKey(client: Client, pair?: { privateKey: string; publicKey: string }): Promise<string> {
  const keys = pair ?? (await client.post('sshKey.generate', {})).body;
  const created = await client.post('sshKey.create', { name: 'server key', privateKey: keys.privateKey, publicKey: keys.publicKey });
  if (created.status !== 200) throw new Error(`sshKey.create: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body.sshKeyId;
}

/** Runs a shell line on the host as its root (the kit's console); fails the test when it fails. */
async function onHost(h: RemoteHost, line: string): Promise<string> {
  const r = await inHost(h, ['sh', '-c', line]);
  if (r.code !== 0) throw new Error(`on ${h.name}: ${line}: exit ${r.code}: ${r.stderr}`);
  return r.stdout;
}

const metricsConfig = {
  server: { refreshRate: 30, port: 4500, token: 'metrics-token', urlCallback: 'https://berth.example.com/callback', retentionDays: 7, cronJob: '0 0 * * *', thresholds: { cpu: 80, memory: 90 } },
  containers: { refreshRate: 30, services: { include: ['web'], exclude: [] } },
};

t.test('server setup and audit', async t => {
  // Caddy (the test image) is the proxy: setup's proxy step starts it on the server.
  const PROXY = `berth-setup-proxy-${process.pid}`;
  const server = await startTestServer({
    deploySettleSeconds: 0,
    proxy: 'caddy',
    proxyImage: TEST_CADDY_IMAGE,
    proxyHttpPort: await freePort(),
    proxyHttpsPort: await freePort(),
    providers: { proxy: { caddy: { options: { serviceName: PROXY } } } },
  });
  t.teardown(() => server.destroy());
  const { client, userId } = await signUpAdmin(server);

  t.test('without a key, setup and validate say to attach one', async t => {
    const srv = (await client.post('server.create', { name: 'keyless', ipAddress: '192.0.2.10', port: 22, sshKeyId: null })).body;
    t.teardown(() => client.post('server.remove', { serverId: srv.serverId }));
    for (const [op, call] of [
      ['server.setup', () => client.post('server.setup', { serverId: srv.serverId })],
      ['server.validate', () => client.get('server.validate', { serverId: srv.serverId })],
      ['server.security', () => client.get('server.security', { serverId: srv.serverId })],
    ] as const) {
      const r = await call();
      t.equal(r.status, 400, op);
      t.match(r.body.message, /has no SSH key: attach one \(server\.update with sshKeyId\)/, `${op} says to attach a key`);
    }
    t.same((await client.get('deployment.allByServer', { serverId: srv.serverId })).body, [], 'no setup was queued');
  });

  t.test("validate without serverId: Berth's own machine, for the instance operators only", async t => {
    const r = await client.get('server.validate', {});
    t.equal(r.status, 200, JSON.stringify(r.body));
    const v = r.body as { docker: { enabled: boolean; version: string | null }; isSwarmInstalled: boolean; checks: { code: string; ok: boolean }[] };
    // This machine runs the engine the tests deploy to, in swarm mode.
    const engine = execFileSync('docker', ['version', '--format', '{{.Server.Version}}']).toString().trim();
    t.same(v.docker, { enabled: true, version: engine }, "docker: this machine's engine and its version");
    t.equal(v.isSwarmInstalled, true, 'in swarm mode');
    const codes = Object.fromEntries(v.checks.map(c => [c.code, c.ok]));
    t.match(codes, { 'docker.missing': true, 'docker.snap': true, 'docker.version': true, 'swarm.inactive': true }, 'the doctor passes what is true here');
    t.ok('swarm.loopback' in codes && 'clock.skew' in codes, 'every check is answered');
    const member = await addMember(server, client, 'validator@example.com', 'admin');
    t.equal((await member.client.get('server.validate', {})).status, 200, "an admin of the instance's organization may: an instance operator");
    const theirs = await otherOrganization(server, member.userId);
    const refused = await theirs.client.get('server.validate', {});
    t.equal(refused.status, 403, 'the owner of another organization may not');
    t.match(refused.body.message, /instance's operators/);
  });

  t.test("setupMonitoring (the monitoring plugin's) checks every bound and stores the configuration on the server", async t => {
    const srv = (await client.post('server.create', { name: 'metrics', ipAddress: '192.0.2.10', port: 22, sshKeyId: null })).body;
    t.teardown(() => client.post('server.remove', { serverId: srv.serverId }));
    const bad: [string, (c: typeof metricsConfig) => void][] = [
      ['metricsConfig.server.refreshRate', c => void (c.server.refreshRate = 1)],
      ['metricsConfig.server.port', c => void (c.server.port = 0)],
      ['metricsConfig.server.urlCallback', c => void (c.server.urlCallback = 'not a url')],
      ['metricsConfig.server.retentionDays', c => void (c.server.retentionDays = 0)],
      ['metricsConfig.server.cronJob', c => void (c.server.cronJob = '')],
      ['metricsConfig.server.thresholds.cpu', c => void (c.server.thresholds.cpu = -1)],
      ['metricsConfig.server.thresholds.memory', c => void (c.server.thresholds.memory = -1)],
      ['metricsConfig.containers.refreshRate', c => void (c.containers.refreshRate = 1)],
    ];
    for (const [field, spoil] of bad) {
      const config = structuredClone(metricsConfig);
      spoil(config);
      const r = await client.post('server.setupMonitoring', { serverId: srv.serverId, metricsConfig: config });
      t.equal(r.status, 400, field);
      t.same(issueFields(r.body), [field], `names ${field}`);
    }
    const stored = await client.post('server.setupMonitoring', { serverId: srv.serverId, metricsConfig });
    t.equal(stored.status, 200, JSON.stringify(stored.body));
    t.match(
      stored.body.metricsConfig,
      { server: { type: 'Remote', ...metricsConfig.server }, containers: metricsConfig.containers },
      'answers the server with its configuration (and the monitoring plugin defaults for its own members)',
    );
    t.same((await client.get('server.one', { serverId: srv.serverId })).body.metricsConfig.server.thresholds, { cpu: 80, memory: 90 }, 'stored');
  });

  t.test("getServerTime answers Berth's time and zone; publicIp this machine's address", async t => {
    const time = (await client.get('server.getServerTime')).body;
    t.ok(Math.abs(Date.parse(time.time) - Date.now()) < 5_000, 'now');
    t.equal(time.timezone, Intl.DateTimeFormat().resolvedOptions().timeZone);
    const ip = (await client.get('server.publicIp')).body;
    t.type(ip, 'string');
    const dev = /\bdev (\S+)/.exec(execFileSync('ip', ['-4', 'route', 'show', 'default'], { encoding: 'utf8' }))?.[1];
    const expected = dev ? (/inet (\d+\.\d+\.\d+\.\d+)/.exec(execFileSync('ip', ['-4', '-o', 'addr', 'show', 'dev', dev], { encoding: 'utf8' }))?.[1] ?? '') : '';
    t.equal(ip, expected, `the address of the default route's interface (${dev ?? 'none'})`);
  });

  if (!canRun(t, 'remote-hosts', remoteHostsMissing())) return;

  t.test('on a real remote host', async t => {
    const set = await privateRemoteHosts(1);
    t.teardown(() => set.down());
    const h = set.hosts[0] as RemoteHost;
    const hostKey = await storedKey(client, { privateKey: h.privateKey, publicKey: h.publicKey });
    const at = { ipAddress: h.address, port: 22, sshKeyId: hostKey, hostKeyFingerprint: h.hostKeyFingerprint };
    const asRoot = (await client.post('server.create', { name: 'as-root', ...at, username: 'root' })).body;
    const asUser = (await client.post('server.create', { name: 'as-user', ...at, username: h.user })).body;
    t.teardown(async () => {
      for (const s of [asRoot, asUser]) await client.post('server.remove', { serverId: s.serverId });
    });
    const validate = async (serverId: string) => {
      const r = await client.get('server.validate', { serverId });
      if (r.status !== 200) throw new Error(`validate: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body as { checks: { code: string; ok: boolean; message: string; fix: string }[]; [k: string]: any };
    };
    const check = async (serverId: string, code: string) => (await validate(serverId)).checks.find(c => c.code === code);
    const log = async (deploymentId: string) => (await client.get('deployment.readLogs', { deploymentId, tail: 500 })).body as string;
    const setups = async (serverId: string) => (await client.get('deployment.allByServer', { serverId })).body as { deploymentId: string; status: string; title: string }[];

    t.test('validate of a fresh host: the peer’s fields and the doctor’s checks', async t => {
      const v = await validate(asRoot.serverId);
      t.match(v.docker, { enabled: true, version: /^\d+\.\d+/ }, 'the engine and its version');
      t.same(v.nixpacks, { enabled: false, version: null }, 'an absent program: version null');
      t.match(v, { isSwarmInstalled: false, isDokployNetworkInstalled: false, privilegeMode: 'root' });
      t.match(
        v.checks.find(c => c.code === 'swarm.inactive'),
        { ok: false, message: /Swarm mode is inactive/, fix: /server\.setup/ },
        'swarm.inactive',
      );
      for (const code of [
        'sudo.none',
        'docker.missing',
        'docker.snap',
        'docker.version',
        'port.busy.80',
        'port.busy.443',
        'port.busy.2377',
        'port.busy.7946',
        'port.busy.4789',
        'disk.low',
        'clock.skew',
      ])
        t.equal(v.checks.find(c => c.code === code)?.ok, true, `${code} passes`);
      t.match(await validate(asUser.serverId), { privilegeMode: 'sudo', dockerGroupMember: true }, 'the sudo user');
    });

    t.test('swarm.loopback: a swarm advertised on loopback', async t => {
      await onHost(h, 'docker swarm init --advertise-addr 127.0.0.1 >/dev/null');
      t.teardown(() => onHost(h, 'docker swarm leave --force >/dev/null'));
      t.match(await check(asRoot.serverId, 'swarm.loopback'), { ok: false, message: /advertised on 127\.0\.0\.1: no other node can join/, fix: /swarm leave/ });
    });

    t.test('setup as root: every step with its exit code in the log; a second setup changes nothing', async t => {
      const first = await client.post('server.setup', { serverId: asRoot.serverId });
      t.equal(first.status, 200, JSON.stringify(first.body));
      t.same(
        first.body.steps.map((s: { step: string }) => s.step),
        ['privilege', 'os', 'docker', 'compose', 'swarm', 'network', 'directories', 'proxy'],
        'the steps in order',
      );
      const byStep = Object.fromEntries(first.body.steps.map((s: { step: string; result: string }) => [s.step, s.result]));
      t.match(byStep, { docker: 'unchanged', swarm: 'changed', network: 'changed', directories: 'changed', proxy: 'changed' }, 'what was missing was applied');
      t.match(await onHost(h, "docker service ls --format '{{.Name}} {{.Replicas}}'"), new RegExp(`${PROXY} 1/1`), 'the proxy runs on the server');
      const text = await log(first.body.deploymentId);
      for (const step of ['os', 'docker', 'compose', 'swarm', 'network', 'directories', 'proxy']) t.match(text, new RegExp(`\\] ${step}: `), `the log names ${step}`);
      t.match(text, /docker swarm init --advertise-addr "\$1" --listen-addr 0\.0\.0\.0:2377' \d+\.\d+\.\d+\.\d+\n  exit 0/, 'the swarm init with its exit code');
      t.match(text, /Setup done/);
      t.match(await onHost(h, "docker info --format '{{.Swarm.LocalNodeState}} {{.Swarm.NodeAddr}}'"), `active ${h.address}`, "advertised on the host's address on the route to Berth");
      t.match(await onHost(h, 'docker network ls --format "{{.Name}} {{.Driver}}"'), /berth-network overlay/, 'the platform network');
      t.match(await onHost(h, 'stat -c %a /etc/dokploy/ssh'), '700', 'the directories');
      const deployment = (await setups(asRoot.serverId)).find(d => d.deploymentId === first.body.deploymentId);
      t.match(deployment, { title: 'Setup Server', status: 'done' }, "a deployment of the server, as the peer's");
      t.match(await validate(asRoot.serverId), { isSwarmInstalled: true, isDokployNetworkInstalled: true, isMainDirectoryInstalled: true });

      const again = await client.post('server.setup', { serverId: asRoot.serverId });
      t.equal(again.status, 200);
      t.same(
        again.body.steps.filter((s: { result: string }) => s.result !== 'unchanged').map((s: { step: string }) => s.step),
        [],
        'a second setup changes nothing',
      );
      t.match(await log(again.body.deploymentId), /in place.*: unchanged/);
    });

    t.test('setup as a sudo user applies through sudo', async t => {
      await onHost(h, 'rm -rf /etc/dokploy');
      const r = await client.post('server.setup', { serverId: asUser.serverId });
      t.equal(r.status, 200, JSON.stringify(r.body));
      t.match(
        r.body.steps.find((s: { step: string }) => s.step === 'directories'),
        { result: 'changed', command: /^sudo -n sh -c/ },
      );
      t.match(await log(r.body.deploymentId), `${h.user} uses sudo`);
      t.match(await onHost(h, 'stat -c %U /etc/dokploy'), 'root', 'made as root');
    });

    t.test('a failing step fails the setup, named with its exit code and stderr', async t => {
      await onHost(h, 'rm -rf /etc/dokploy/logs && touch /etc/dokploy/logs && rm -rf /etc/dokploy/compose');
      t.teardown(() => onHost(h, 'rm -f /etc/dokploy/logs'));
      const r = await client.post('server.setup', { serverId: asRoot.serverId });
      t.equal(r.status, 400);
      t.match(r.body.message, /Setup step "directories" failed \(exit code 1\): mkdir: .*logs.*File exists/, 'the step, its exit code and why');
      const [failed] = await setups(asRoot.serverId);
      t.match(failed, { status: 'error' });
      t.match(await log(failed!.deploymentId), /failed: exit 1\n  stderr:\n    mkdir: /, 'the log holds its stderr');
    });

    t.test("the server's own command runs instead of the steps, its exit code read", async t => {
      t.teardown(() => client.post('server.update', { serverId: asRoot.serverId, command: '' }));
      await client.post('server.update', { serverId: asRoot.serverId, command: 'echo custom-setup-ran; touch /root/custom-setup; exit 1' });
      const failed = await client.post('server.setup', { serverId: asRoot.serverId });
      t.equal(failed.status, 400, 'exit 1 fails the setup');
      t.match(failed.body.message, /Setup step "command" failed \(exit code 1\)/);
      t.match(await log((await setups(asRoot.serverId))[0]!.deploymentId), /custom-setup-ran/, 'its output in the log');
      t.equal((await inHost(h, ['test', '-f', '/root/custom-setup'])).code, 0, 'it ran');
      await client.post('server.update', { serverId: asRoot.serverId, command: 'echo fine' });
      const ok = await client.post('server.setup', { serverId: asRoot.serverId });
      t.equal(ok.status, 200);
      t.same(
        ok.body.steps.map((s: { step: string; exitCode: number }) => [s.step, s.exitCode]),
        [['command', 0]],
        'only the command',
      );
    });

    t.test('getDefaultCommand is a script that runs as is', async t => {
      const script = (await client.get('server.getDefaultCommand', { serverId: asRoot.serverId })).body as string;
      t.match(script, /^#!\/bin\/sh\n/);
      const ran = await inHost(h, ['sh', '-c', `SSH_CLIENT="${set.gateway} 1 22" sh`], script);
      t.equal(ran.code, 0, ran.stderr);
      t.match(ran.stdout, /== docker[\s\S]*== swarm[\s\S]*setup done/);
    });

    t.test('validate provokes each code', async t => {
      t.test('sudo.none', async t => {
        await onHost(h, `mv /etc/sudoers.d/90-${h.user} /root/sudoers.saved`);
        t.teardown(() => onHost(h, `mv /root/sudoers.saved /etc/sudoers.d/90-${h.user}`));
        t.match(await check(asUser.serverId, 'sudo.none'), { ok: false, message: /no passwordless sudo/, fix: /NOPASSWD/ });
        const setup = await client.post('server.setup', { serverId: asUser.serverId });
        t.match(setup.body.message, /Setup step "privilege" failed .*no passwordless sudo/, 'setup stops at the privilege step');
      });
      t.test('docker.missing (the program hidden)', async t => {
        // Every docker program on the PATH (this machine has more than one) hidden by an empty file.
        const hidden = (await onHost(h, 'which -a docker')).trim().split('\n');
        await onHost(h, `touch /root/empty && for p in ${hidden.join(' ')}; do mount --bind /root/empty "$p"; done`);
        t.teardown(() => onHost(h, `umount ${hidden.join(' ')}`));
        const v = await validate(asRoot.serverId);
        t.match(
          v.checks.find(c => c.code === 'docker.missing'),
          { ok: false, message: 'No docker program on the server', fix: /server\.setup/ },
        );
        t.same(v.docker, { enabled: false, version: null });
      });
      t.test('port.busy.80', async t => {
        const pid = (await onHost(h, 'python3 -m http.server 80 --bind 0.0.0.0 >/dev/null 2>&1 & echo $!')).trim();
        t.teardown(() => onHost(h, `kill ${pid}`));
        t.ok(await waitFor('python3 to listen on :80', async () => (await onHost(h, 'ss -Hlnt')).includes(':80 '), { timeout: 10_000, interval: 50 }), 'something holds port 80');
        t.match(await check(asRoot.serverId, 'port.busy.80'), { ok: false, message: /Port 80 is held by python3/ });
        t.match(await check(asRoot.serverId, 'port.busy.443'), { ok: true });
      });
      t.test('disk.low (a full mount where Berth writes)', async t => {
        await onHost(h, 'mount -t tmpfs -o size=256k tmpfs /etc/dokploy');
        t.teardown(() => onHost(h, 'umount /etc/dokploy'));
        t.match(await check(asRoot.serverId, 'disk.low'), { ok: false, message: /\/etc\/dokploy .*MiB free/ });
      });
      t.test("clock.skew (Berth's clock a minute ahead)", async t => {
        const clock = manualClock(server);
        clock.advance(60_000);
        t.teardown(() => server.kernel.container.register({ clock: asValue({ now: () => Date.now() }) }));
        t.match(await check(asRoot.serverId, 'clock.skew'), { ok: false, message: /behind Berth's/, fix: /timesyncd|chrony/ });
      });
      t.test('the connection: port, key, host key, name, route', async t => {
        const other = await storedKey(client);
        const cases: [string, Record<string, unknown>][] = [
          ['ssh.port', { port: 2 }],
          ['ssh.auth', { sshKeyId: other }],
          ['ssh.hostKeyChanged', { hostKeyFingerprint: `SHA256:${'B'.repeat(43)}` }],
          ['ssh.dns', { ipAddress: 'no-such-host.invalid' }],
          ['ssh.route', { ipAddress: set.gateway.replace(/\.\d+$/, '.250') }],
        ];
        for (const [code, change] of cases) {
          const srv = (await client.post('server.create', { name: code, ...at, ...change })).body;
          t.teardown(() => client.post('server.remove', { serverId: srv.serverId }));
          const v = await validate(srv.serverId);
          t.same(
            v.checks.map(c => [c.code, c.ok]),
            [[code, false]],
            code,
          );
          t.ok(v.checks[0]!.fix.length > 10, `${code}: a fix`);
        }
      });
    });

    t.test('security reads the effective SSH configuration, included files too', async t => {
      await onHost(h, "mkdir -p /etc/ssh/sshd_config.d && echo 'PermitRootLogin yes' > /etc/ssh/sshd_config.d/10-root.conf && sed -i '1i Include /etc/ssh/sshd_config.d/*.conf' /etc/ssh/sshd_config");
      t.teardown(() => onHost(h, "sed -i '1d' /etc/ssh/sshd_config && rm /etc/ssh/sshd_config.d/10-root.conf"));
      for (const srv of [asRoot, asUser]) {
        const r = await client.get('server.security', { serverId: srv.serverId });
        t.equal(r.status, 200, JSON.stringify(r.body));
        t.match(r.body, {
          ssh: { enabled: true, keyAuth: true, permitRootLogin: 'yes', passwordAuth: 'no', usePam: 'no' },
          nonRootUser: { hasValidSudoUser: true },
          ufw: { installed: Boolean, active: false },
          fail2ban: { installed: Boolean },
          unattendedUpgrades: { installed: Boolean, updateEnabled: Number },
        });
      }
    });

    t.test("publicIp of a server: its default route's interface, else the address Berth's SSH connection arrives on", async t => {
      t.equal((await onHost(h, 'ip -4 route show default')).trim(), '', 'the host has no default route');
      t.equal((await client.get('server.publicIp', { serverId: asRoot.serverId })).body, h.address, 'no default route: the address the SSH connection arrived on');
      await onHost(h, `ip route add default via ${set.gateway}`);
      t.teardown(() => onHost(h, 'ip route del default'));
      t.equal((await client.get('server.publicIp', { serverId: asRoot.serverId })).body, h.address);
    });

    t.test("another organization's server is 404", async t => {
      const other = await otherOrganization(server, userId);
      const serverId = asRoot.serverId;
      t.equal((await other.client.post('server.setup', { serverId })).status, 404);
      t.equal((await other.client.get('server.validate', { serverId })).status, 404);
      t.equal((await other.client.get('server.security', { serverId })).status, 404);
      t.equal((await other.client.get('server.getDefaultCommand', { serverId })).status, 404);
      t.equal((await other.client.get('server.publicIp', { serverId })).status, 404);
      t.equal((await other.client.post('server.setupMonitoring', { serverId, metricsConfig })).status, 404);
    });
  });
});
