// Two kit hosts of the run as one swarm, as the multi-node registry tests take them: a pair of the
// run's hosts whose swarm membership no other file changes, out of any swarm before the file and
// after it, added to a Berth test server through its API (sshKey.create, server.create) and the
// second joined to the first's swarm as a worker by cluster.joinServer, so Berth does it.
import type { Client } from '@berth/core/testing';
import { inHost, sharedRemoteHosts, type RemoteHost, type RemoteHostSet } from '@berth/test/remote-hosts';

export interface HostPair {
  set: RemoteHostSet;
  /** The manager-to-be (host `first` of the run, 1-based) and the worker-to-be (host `first + 1`). */
  m: RemoteHost;
  w: RemoteHost;
}

/** Hosts `first` and `first + 1` of the run, out of any swarm now and again when the file ends. */
export async function hostPair(t: { teardown(fn: () => unknown): void }, first: number): Promise<HostPair> {
  const set = await sharedRemoteHosts(first + 1);
  const [m, w] = set.hosts.slice(first - 1) as [RemoteHost, RemoteHost];
  const leave = () => Promise.all([w, m].map(h => inHost(h, ['docker', 'swarm', 'leave', '--force'])));
  await leave();
  t.teardown(leave);
  return { set, m, w };
}

/** Adds kit hosts as servers of the client's organization (one sshKey record, the run's key); answers a function per host. */
export async function serversOf(client: Client, keyOf: RemoteHost): Promise<(h: RemoteHost, serverType?: 'deploy' | 'build') => Promise<string>> {
  const key = await client.post('sshKey.create', { name: 'kit', privateKey: keyOf.privateKey, publicKey: keyOf.publicKey });
  if (key.status !== 200) throw new Error(`sshKey.create: ${JSON.stringify(key.body)}`);
  return async (h, serverType = 'deploy') => {
    const res = await client.post('server.create', {
      name: h.name,
      ipAddress: h.address,
      port: 22,
      username: 'root',
      sshKeyId: key.body.sshKeyId,
      hostKeyFingerprint: h.hostKeyFingerprint,
      serverType,
    });
    if (res.status !== 200) throw new Error(`server.create: ${JSON.stringify(res.body)}`);
    return res.body.serverId as string;
  };
}

/** cluster.joinServer as a worker; answers the worker's node id. */
export async function joinWorker(client: Client, serverId: string, managerServerId: string): Promise<string> {
  const joined = await client.post('cluster.joinServer', { serverId, managerServerId, role: 'worker' });
  if (joined.status !== 200) throw new Error(`cluster.joinServer: ${JSON.stringify(joined.body)}`);
  return joined.body.nodeId as string;
}

/** The files under a host's /root and /etc/docker that hold `secret` (none: ''). */
export async function credentialsOn(h: RemoteHost, secret: string): Promise<string> {
  return (await inHost(h, ['grep', '-rlsF', '--', secret, '/root', '/etc/docker'])).stdout.trim();
}
