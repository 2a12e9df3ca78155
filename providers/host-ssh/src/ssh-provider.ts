// Host provider "ssh": each server of the server records reached over its own SshHost (one pooled
// connection, its host key pinned). The provider's options are the operator's defaults for every
// server; the record gives the address, login, key and pinned fingerprint. ssh2 and dockerode load
// on the first connect, not at boot.
import { badRequest, type HostConnection, type HostProvider, type HostServer } from '@berth/core';
import type { SshHostOptions } from './ssh-host.ts';

/** What the operator sets for every server (`providers.host.ssh.options`). */
export type SshProviderOptions = Pick<SshHostOptions, 'maxChannels' | 'keepaliveInterval' | 'readyTimeout' | 'engineTransport' | 'engineSocket'>;

export class SshHostProvider implements HostProvider {
  readonly id = 'ssh';
  readonly #options: SshProviderOptions;

  constructor(options: SshProviderOptions) {
    this.#options = options;
  }

  async connect(server: HostServer | null): Promise<HostConnection> {
    if (!server) throw new Error('host.ssh reaches servers only: the machine Berth runs on is host.local');
    if (!server.privateKey) throw badRequest(`Server ${server.serverId} has no SSH key: attach one (sshKeyId) before using it`);
    const { SshHost } = await import('./ssh-host.ts');
    return new SshHost({
      ...this.#options,
      host: server.ipAddress,
      port: server.port,
      username: server.username,
      privateKey: server.privateKey,
      hostKeyFingerprint: server.hostKeyFingerprint,
      ...(server.onHostKeyPinned ? { onHostKeyPinned: server.onHostKeyPinned } : {}),
    });
  }
}
