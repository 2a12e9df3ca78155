// @berth/provider-host-ssh: host provider "ssh", a remote Docker host over SSH (connect(server)).
// SshHost (./ssh-host.ts, loaded on the first connect) is its connection: one pooled ssh2 connection per server, commands as argument arrays,
// dockerode over the same connection, the host key pinned.
import { defineProvider, Type } from '@berth/core';
import { SshHostProvider } from './ssh-provider.ts';

const options = Type.Object(
  {
    maxChannels: Type.Integer({
      env: 'BERTH_HOST_SSH_MAX_CHANNELS',
      minimum: 1,
      maximum: 64,
      default: 8,
      description: "Channels (commands, engine requests) open at once on one server's connection; more wait in line (OpenSSH allows 10 sessions per connection by default: MaxSessions)",
    }),
    engineTransport: Type.Enum(['stream-local', 'dial-stdio'], {
      env: 'BERTH_HOST_SSH_ENGINE_TRANSPORT',
      default: 'stream-local',
      description:
        'How the remote engine is reached over the connection: a forward to its unix socket (stream-local, faster) or `docker system dial-stdio` (for servers that forbid stream-local forwarding)',
    }),
    engineSocket: Type.String({ env: 'BERTH_HOST_SSH_ENGINE_SOCKET', pattern: '^/', default: '/var/run/docker.sock', description: "The engine's socket on the servers, for stream-local" }),
    keepaliveInterval: Type.Integer({
      env: 'BERTH_HOST_SSH_KEEPALIVE_MS',
      minimum: 100,
      default: 15_000,
      description: 'Milliseconds between keepalive probes; a connection counts as dropped after 3 unanswered',
    }),
    readyTimeout: Type.Integer({ env: 'BERTH_HOST_SSH_READY_TIMEOUT_MS', minimum: 100, default: 20_000, description: 'Milliseconds allowed for connecting and logging in to a server' }),
  },
  { additionalProperties: false },
);

export default defineProvider({ contract: 'host', id: 'ssh', options, create: o => new SshHostProvider(o) });
export { SshHostProvider, type SshProviderOptions } from './ssh-provider.ts';
export { HostKeyChangedError, hostKeyFingerprint } from './host-key.ts';
export { commandLine, quoteArg } from './shell-quote.ts';
