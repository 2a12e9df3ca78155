// server.validate, server.security and server.publicIp: what is true on a server, read over its
// SSH connection. validate is a doctor: each check answers a stable code, whether it passes, a
// sentence and the fix (Berth's `checks`), beside the peer's fields, answered truthfully (a
// program's version null when it is absent). security reads the effective SSH configuration
// (`sshd -T`, so included files count), ufw, fail2ban, unattended-upgrades and the sudo users.
// Nothing here asks a service on the internet. Every output read goes through core's OutputFilter
// (join tokens cut) before it is parsed or quoted.
import { OutputFilter, redactOutput } from '@berth/core';
import type { Host } from '@berth/plugin-hosts';
import { MAIN_DIRECTORY } from './setup.ts';

export interface Check {
  code: string;
  ok: boolean;
  message: string;
  fix: string;
}

/** The ports a swarm manager with the proxy needs free (held by nothing but the engine and the proxy). */
export const PORTS = [80, 443, 2377, 7946, 4789] as const;
/** Below this much free space (or 5 %) where Berth writes, disk.low fails. */
export const DISK_LOW_BYTES = 1024 ** 3;
/** A server's clock further from Berth's than this fails clock.skew. */
export const CLOCK_SKEW_MS = 10_000;
/** The oldest engine Berth drives (API 1.41). */
const DOCKER_MIN_MAJOR = 20;

const PROGRAMS = { docker: 'docker', rclone: 'rclone', nixpacks: 'nixpacks', buildpacks: 'pack', railpack: 'railpack' } as const;

// One read of everything validate needs, as `key=value` lines (values on one line).
const PROBE = `v() { "$@" 2>/dev/null | head -n1 | tr -d '\\r'; }
have() { _p=$(command -v "$1" 2>/dev/null) && [ -s "$_p" ]; }
echo "uid=$(id -u)"
echo "groups=$(id -Gn)"
if [ "$(id -u)" = 0 ]; then echo sudo=root; elif sudo -n true 2>/dev/null; then echo sudo=yes; else echo sudo=no; fi
for p in docker rclone nixpacks pack railpack; do
  if have "$p"; then echo "path.$p=$(command -v "$p")"; fi
done
have docker && echo "docker.server=$(v docker version --format '{{.Server.Version}}')"
have docker && echo "docker.client=$(v docker --version)"
have rclone && echo "version.rclone=$(v rclone version)"
have nixpacks && echo "version.nixpacks=$(v nixpacks --version)"
have pack && echo "version.pack=$(v pack --version)"
have railpack && echo "version.railpack=$(v railpack --version)"
if have docker; then
  echo "swarm.state=$(v docker info --format '{{.Swarm.LocalNodeState}}')"
  echo "swarm.addr=$(v docker info --format '{{.Swarm.NodeAddr}}')"
  echo "docker.root=$(v docker info --format '{{.DockerRootDir}}')"
  docker network inspect "$1" >/dev/null 2>&1 && echo network=yes
fi
[ -d "$2" ] && echo maindir=yes
echo "time=$(date +%s%3N)"`;

/** Runs a program on the host; its stdout and stderr filtered. */
async function read(host: Pick<Host, 'run'>, argv: string[]) {
  const r = await host.run(argv);
  const filter = new OutputFilter();
  return { ...r, stdout: filter.apply(r.stdout), stderr: filter.apply(r.stderr) };
}

const parse = (text: string) => Object.fromEntries(text.split('\n').flatMap(l => (l.includes('=') ? [[l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1).trim()]] : [])));
const versionOf = (line: string | undefined) => (line ? (/\d+\.\d+(\.\d+)?[^\s,]*/.exec(line)?.[0] ?? line) : null);

/** A failed connection as a check: which part of reaching the server failed, and its fix. */
export function connectionCheck(e: Error & { code?: string }, at: { ipAddress: string; port: number; username: string }): Check {
  const m = redactOutput(e.message);
  const where = `${at.username}@${at.ipAddress}:${at.port}`;
  if (e.name === 'HostKeyChangedError' || /host key of .* changed/i.test(m))
    return { code: 'ssh.hostKeyChanged', ok: false, message: m, fix: 'If the server was reinstalled on purpose, accept its new key with server.update hostKeyFingerprint; otherwise do not use it' };
  if (/ENOTFOUND|EAI_AGAIN|getaddrinfo/.test(m))
    return { code: 'ssh.dns', ok: false, message: `${at.ipAddress} does not resolve: ${m}`, fix: 'Correct the address (server.update ipAddress) or its DNS record' };
  if (/ECONNREFUSED/.test(m))
    return { code: 'ssh.port', ok: false, message: `Nothing answers SSH on ${at.ipAddress}:${at.port}: ${m}`, fix: `Correct the port (server.update port) or start sshd on ${at.port}` };
  if (/refused the key|authentication|All configured authentication methods failed/i.test(m))
    return {
      code: 'ssh.auth',
      ok: false,
      message: `${where} refused the key: ${m}`,
      fix: `Add the server key's public half to ~${at.username}/.ssh/authorized_keys on the server, or attach the right key (server.update sshKeyId)`,
    };
  return {
    code: 'ssh.route',
    ok: false,
    message: `${at.ipAddress}:${at.port} cannot be reached: ${m}`,
    fix: 'Check the route and firewalls between Berth and the server (ping, traceroute), and that the server is up',
  };
}

/** The validate answer: the peer's fields and Berth's checks. */
export async function validateServer(host: Host, o: { username: string; network: string; serverType: string; now: () => number }) {
  const checks: Check[] = [];
  const pass = (code: string, message: string) => checks.push({ code, ok: true, message, fix: '' });
  const fail = (code: string, message: string, fix: string) => checks.push({ code, ok: false, message, fix });
  const before = o.now();
  const ran = await read(host, ['sh', '-c', PROBE, 'berth-validate', o.network, MAIN_DIRECTORY]);
  const after = o.now();
  const f = parse(ran.stdout);
  const sudo = f.sudo === 'root' || f.sudo === 'yes' ? (f.sudo === 'root' ? [] : ['sudo', '-n']) : null;

  if (sudo) pass('sudo.none', f.sudo === 'root' ? 'Logged in as root' : `${o.username} has passwordless sudo`);
  else
    fail(
      'sudo.none',
      `${o.username} is not root and has no passwordless sudo: setup cannot install or configure anything`,
      `On the server: echo '${o.username} ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/90-${o.username}, or log in as root`,
    );

  const dockerVersion = versionOf(f['docker.server']) ?? null;
  if (!f['path.docker']) fail('docker.missing', 'No docker program on the server', "Run server.setup (installs the distribution's docker.io), or apt-get install docker.io");
  else if (!dockerVersion)
    fail(
      'docker.missing',
      `docker is installed (${f['path.docker']}) but its engine does not answer ${o.username}`,
      `Start it (systemctl start docker) and add ${o.username} to the docker group, or log in as root`,
    );
  else pass('docker.missing', `Docker ${dockerVersion} answers`);
  if (f['path.docker']?.startsWith('/snap/'))
    fail(
      'docker.snap',
      `Docker comes from a snap (${f['path.docker']}): its confinement hides /etc/dokploy and host paths from containers`,
      'snap remove docker, then apt-get install docker.io (or run server.setup)',
    );
  else pass('docker.snap', 'Docker is not a snap');
  const major = dockerVersion ? Number(dockerVersion.split('.')[0]) : null;
  if (major !== null && major < DOCKER_MIN_MAJOR)
    fail('docker.version', `Docker ${dockerVersion} is older than ${DOCKER_MIN_MAJOR}.10 (API 1.41)`, 'Upgrade the engine from the distribution or Docker’s packages');
  else pass('docker.version', dockerVersion ? `Docker ${dockerVersion} is recent enough` : 'No engine to judge');

  const swarmActive = f['swarm.state'] === 'active';
  if (o.serverType === 'deploy') {
    if (swarmActive) pass('swarm.inactive', 'Swarm mode is active');
    else fail('swarm.inactive', `Swarm mode is ${f['swarm.state'] || 'unknown (no engine)'}`, 'Run server.setup (docker swarm init --advertise-addr <the server’s address>)');
    if (swarmActive && /^(127\.|::1$|localhost)/.test(f['swarm.addr'] ?? ''))
      fail(
        'swarm.loopback',
        `The swarm is advertised on ${f['swarm.addr']}: no other node can join it`,
        'docker swarm leave --force, then server.setup (advertises the address on the route to Berth)',
      );
    else pass('swarm.loopback', swarmActive ? `The swarm is advertised on ${f['swarm.addr']}` : 'No swarm yet');
  }

  // Ports, and free space, read as root where the login has sudo (to see every process).
  const listeners = await read(host, [...(sudo ?? []), 'sh', '-c', 'ss -Hlntup 2>/dev/null || ss -Hlntu']);
  for (const port of PORTS) {
    const holders = listeners.stdout
      .split('\n')
      .filter(l => new RegExp(`[:*]${port}\\s`).test(l.split(/\s+/).slice(4, 5).join(' ') + ' '))
      // Without a process, seen as root: a kernel socket (the overlay's VXLAN port is one).
      .map(l => /users:\(\("([^"]+)"/.exec(l)?.[1] ?? (sudo ? 'kernel' : 'a process Berth cannot see'));
    const foreign = holders.filter(p => !['dockerd', 'docker-proxy', 'containerd', 'traefik', 'caddy', 'kernel'].includes(p));
    if (foreign.length) fail(`port.busy.${port}`, `Port ${port} is held by ${[...new Set(foreign)].join(', ')}`, `Stop or move what listens on ${port} (ss -lntup | grep :${port})`);
    else pass(`port.busy.${port}`, `Port ${port} is free for the engine and the proxy`);
  }

  const paths = ['/', f['docker.root'] || '/var/lib/docker', MAIN_DIRECTORY];
  const df = await read(host, ['sh', '-c', 'for p; do [ -e "$p" ] && df -Pk -- "$p" | tail -n1 | sed "s|^|$p |"; done; true', 'berth-df', ...paths]);
  const low = df.stdout
    .split('\n')
    .filter(Boolean)
    .map(l => l.split(/\s+/))
    .filter(([, , size, , avail]) => Number(avail) * 1024 < DISK_LOW_BYTES || Number(avail) < Number(size) * 0.05)
    .map(([path, , , , avail, , mount]) => `${path} (on ${mount}: ${Math.round(Number(avail) / 1024)} MiB free)`);
  if (low.length) fail('disk.low', `Little free space: ${low.join(', ')}`, 'Free space (docker system prune, old logs) or grow the disk');
  else pass('disk.low', 'Enough free space where Berth writes');

  const remote = Number(f.time);
  const skew = Number.isFinite(remote) ? remote - (before + after) / 2 : NaN;
  if (!Number.isFinite(skew)) fail('clock.skew', 'The server did not tell its time', 'Check that date works on the server');
  else if (Math.abs(skew) > CLOCK_SKEW_MS)
    fail(
      'clock.skew',
      `The server's clock is ${Math.round(Math.abs(skew) / 1000)} s ${skew > 0 ? 'ahead of' : 'behind'} Berth's`,
      'Synchronise its clock (apt-get install systemd-timesyncd, or chrony)',
    );
  else pass('clock.skew', `The server's clock is within ${CLOCK_SKEW_MS / 1000} s of Berth's`);

  const program = (key: keyof typeof PROGRAMS) => {
    const version = key === 'docker' ? (dockerVersion ?? versionOf(f['docker.client'])) : (versionOf(f[`version.${PROGRAMS[key]}`]) ?? (f[`path.${PROGRAMS[key]}`] ? 'unknown' : null));
    return { enabled: Boolean(f[`path.${PROGRAMS[key]}`]), version };
  };
  return {
    docker: program('docker'),
    rclone: program('rclone'),
    nixpacks: program('nixpacks'),
    buildpacks: program('buildpacks'),
    railpack: program('railpack'),
    isDokployNetworkInstalled: f.network === 'yes',
    isSwarmInstalled: swarmActive,
    isMainDirectoryInstalled: f.maindir === 'yes',
    privilegeMode: f.sudo === 'root' ? 'root' : f.sudo === 'yes' ? 'sudo' : 'none',
    dockerGroupMember: (f.groups ?? '').split(' ').includes('docker'),
    checks,
  };
}

// The security audit's reads (as root: sshd -T reads the host keys). $1: a file of mktemp's, which
// auditServer made and removes (a fixed name in /tmp, written as root, would follow anyone's link).
const AUDIT = `sshd=$(command -v sshd || echo /usr/sbin/sshd)
if "$sshd" -T >"$1" 2>/dev/null; then sed 's/^/ssh. /' "$1"; echo "sshd.ok=yes"; fi
pgrep -x sshd >/dev/null 2>&1 && echo "sshd.running=yes"
if command -v ufw >/dev/null 2>&1; then echo ufw.installed=yes; ufw status verbose 2>/dev/null | sed 's/^/ufw. /'; fi
if command -v fail2ban-client >/dev/null 2>&1; then echo f2b.installed=yes
  systemctl is-enabled fail2ban >/dev/null 2>&1 && echo f2b.enabled=yes
  fail2ban-client ping >/dev/null 2>&1 && echo f2b.active=yes
  fail2ban-client status sshd >/dev/null 2>&1 && echo f2b.sshd=yes
  echo "f2b.mode=$(sed -n '/^\\[sshd\\]/,/^\\[/s/^mode *= *//p' /etc/fail2ban/jail.local /etc/fail2ban/jail.d/*.conf 2>/dev/null | tail -n1)"
fi
if dpkg-query -W -f='\${Status}' unattended-upgrades 2>/dev/null | grep -q 'install ok installed'; then echo uu.installed=yes
  systemctl is-active unattended-upgrades >/dev/null 2>&1 && echo uu.active=yes
  eval "$(apt-config shell U APT::Periodic::Update-Package-Lists P APT::Periodic::Unattended-Upgrade)"
  echo "uu.update=\${U:-0}"; echo "uu.upgrade=\${P:-0}"
fi
for u in $(awk -F: '$3 >= 1000 && $3 < 65534 { print $1 }' /etc/passwd); do
  sudo -l -U "$u" 2>/dev/null | grep -q '(ALL' && { echo "sudouser=$u"; break; }
done
true`;

/** The security audit: the peer's fields, every one filled from what the server answers. */
export async function auditServer(host: Host, sudo: string[]) {
  const made = await host.run([...sudo, 'mktemp', '-t', 'berth-sshd-T.XXXXXXXXXX']);
  const file = made.stdout.trim();
  if (made.code !== 0 || !file.startsWith('/')) throw new Error(`mktemp failed on the server (exit ${made.code}): ${redactOutput(made.stderr.trim())}`);
  let ran: Awaited<ReturnType<typeof read>>;
  try {
    ran = await read(host, [...sudo, 'sh', '-c', AUDIT, 'berth-audit', file]);
  } finally {
    await host.run([...sudo, 'rm', '-f', '--', file]);
  }
  const lines = ran.stdout.split('\n');
  const f = parse(lines.filter(l => !/^(ssh|ufw)\. /.test(l)).join('\n'));
  const ssh = Object.fromEntries(
    lines
      .filter(l => l.startsWith('ssh. '))
      .map(l => l.slice(5).split(/\s+/))
      .map(([k, ...v]) => [k!.toLowerCase(), v.join(' ')]),
  );
  const ufw = lines.filter(l => l.startsWith('ufw. ')).map(l => l.slice(5));
  const sshdRead = f['sshd.ok'] === 'yes';
  return {
    ufw: { installed: f['ufw.installed'] === 'yes', active: ufw.some(l => /^Status:\s*active/i.test(l)), defaultIncoming: /Default:\s*(\w+)\s*\(incoming\)/i.exec(ufw.join('\n'))?.[1] ?? '' },
    ssh: {
      enabled: f['sshd.running'] === 'yes' || sshdRead,
      keyAuth: sshdRead ? ssh.pubkeyauthentication === 'yes' : false,
      permitRootLogin: ssh.permitrootlogin ?? '',
      passwordAuth: ssh.passwordauthentication ?? '',
      usePam: ssh.usepam ?? '',
    },
    nonRootUser: { hasValidSudoUser: Boolean(f.sudouser) },
    unattendedUpgrades: {
      installed: f['uu.installed'] === 'yes',
      active: f['uu.active'] === 'yes',
      updateEnabled: Number(f['uu.update'] ?? 0) || 0,
      upgradeEnabled: Number(f['uu.upgrade'] ?? 0) || 0,
    },
    fail2ban: {
      installed: f['f2b.installed'] === 'yes',
      enabled: f['f2b.enabled'] === 'yes',
      active: f['f2b.active'] === 'yes',
      sshEnabled: f['f2b.installed'] === 'yes' ? String(f['f2b.sshd'] === 'yes') : '',
      sshMode: f['f2b.mode'] ?? '',
    },
  };
}

/** Whether the login is root ([]), has passwordless sudo (['sudo', '-n']), or neither (null). */
export async function privilege(host: Host): Promise<string[] | null> {
  const r = await host.run(['sh', '-c', 'if [ "$(id -u)" = 0 ]; then echo root; elif sudo -n true 2>/dev/null; then echo sudo; fi']);
  return r.stdout.trim() === 'root' ? [] : r.stdout.trim() === 'sudo' ? ['sudo', '-n'] : null;
}

/**
 * The address of the interface that carries the default route on a server; without a default
 * route, the address the server sees Berth's SSH connection arrive on (SSH_CONNECTION's third
 * field, set by sshd); '' only when neither is known.
 */
export async function serverRouteAddress(host: Host): Promise<string> {
  const r = await host.run([
    'sh',
    '-c',
    `dev=$(ip -4 route show default | sed -n 's/.* dev \\([^ ]*\\).*/\\1/p' | head -n1); [ -n "$dev" ] && ip -4 -o addr show dev "$dev" | sed -n 's/.* inet \\([0-9.]*\\).*/\\1/p' | head -n1`,
  ]);
  const routed = r.stdout.trim();
  if (routed) return routed;
  const arrived = await host.run(['sh', '-c', 'set -- $SSH_CONNECTION; echo "${3:-}"']);
  return arrived.stdout.trim();
}
