#!/usr/bin/env bash
# The inside of one remote test host. remote-hosts.ts starts it as
#   nsenter --net=/run/netns/<ns> unshare --mount --uts --propagation private bash remote-host-inside.sh <dir> <name> <user>
# so everything below happens in the host's own network, mount and UTS namespaces: its own /etc,
# /usr and package database (copy-on-write over the machine's), its own /root, /home, /tmp and
# /run, its own dockerd (socket at /var/run/docker.sock, and at <dir>/docker.sock for the kit) and
# its own sshd on port 22. It writes <dir>/ready when both answer, then stays as the process that
# holds the namespaces (the kit enters them with nsenter --target <its pid>).
set -euo pipefail
dir=$1 name=$2 user=$3
log() { echo "[remote-host $name] $*" >&2; }

hostname "$name"
# Copy-on-write over the machine's files: users, sudoers, /etc/ssh, /etc/docker and packages a
# later test installs stay on this host.
for d in etc usr var/lib/dpkg var/lib/apt; do
  mkdir -p "$dir/fs/$d.up" "$dir/fs/$d.work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$dir/fs/$d.up,workdir=$dir/fs/$d.work" "/$d"
done
echo "$name" >/etc/hostname
printf '127.0.0.1 localhost\n127.0.1.1 %s\n' "$name" >/etc/hosts
# The machine's engine key would give this engine the machine's engine ID; its host keys are not this host's.
rm -f /etc/docker/key.json /etc/docker/daemon.json /etc/ssh/ssh_host_*
ssh-keygen -q -t ed25519 -N '' -C "root@$name" -f /etc/ssh/ssh_host_ed25519_key

mkdir -p "$dir/root" "$dir/home" "$dir/tmp"
chmod 700 "$dir/root"; chmod 755 "$dir/home"; chmod 1777 "$dir/tmp"
mount --bind "$dir/root" /root
mount --bind "$dir/home" /home
mount --bind "$dir/tmp" /tmp
# A fresh /run hides the machine's sockets (its engine, containerd) from this host's programs.
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/sshd /run/lock

# Logins: root and a non-root user with passwordless sudo, both with the kit's key.
groupadd -f docker
id "$user" >/dev/null 2>&1 || useradd -m -s /bin/bash -G docker "$user"
usermod -p '*' "$user"   # no password, but not locked: sshd refuses keys for a locked account
echo "$user ALL=(ALL) NOPASSWD:ALL" >"/etc/sudoers.d/90-$user"; chmod 440 "/etc/sudoers.d/90-$user"
for home in /root "/home/$user"; do
  owner=$([ "$home" = /root ] && echo root || echo "$user")
  install -d -m 700 -o "$owner" -g "$owner" "$home/.ssh"
  install -m 600 -o "$owner" -g "$owner" "$dir/authorized_keys" "$home/.ssh/authorized_keys"
done

cat >/etc/ssh/sshd_config <<CONF
Port 22
HostKey /etc/ssh/ssh_host_ed25519_key
PidFile $dir/sshd.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
Subsystem sftp /usr/lib/openssh/sftp-server
CONF

dockerd --data-root "$dir/data" --exec-root "$dir/exec" --pidfile "$dir/docker.pid" \
  -H unix:///var/run/docker.sock -H "unix://$dir/docker.sock" --cgroup-parent "/$name" \
  >"$dir/dockerd.log" 2>&1 </dev/null &
/usr/sbin/sshd -E "$dir/sshd.log"

for _ in $(seq 300); do
  docker -H "unix://$dir/docker.sock" version >/dev/null 2>&1 && [ -s "$dir/sshd.pid" ] && break
  sleep 0.1
done
docker -H "unix://$dir/docker.sock" version >/dev/null 2>&1 || { log "dockerd did not start"; tail -20 "$dir/dockerd.log" >&2; exit 1; }
[ -s "$dir/sshd.pid" ] || { log "sshd did not start"; cat "$dir/sshd.log" >&2; exit 1; }
echo "$$" >"$dir/ready"
# The holder: bash reaps its children (dockerd) as they exit, so none lingers as a zombie.
while :; do sleep 3600 & wait $!; done
