// Ports published on a host belong to the host, whoever publishes them: an application's
// published port, a database's external port. Each plugin that publishes ports registers
// what it holds here, and asks here before it takes a port, so two kinds of workload never
// claim the same one.
import type { EntityManager } from '@mikro-orm/postgresql';

export interface PortHold {
  /** What holds it: 'port' (the port plugin's records), or a database kind. */
  kind: string;
  /** The holding record's id. */
  id: string;
}

export interface PortHolder {
  /** The holds on this port/protocol of the host (serverId null = the local host). */
  holds(port: number, protocol: 'tcp' | 'udp', serverId: string | null, em: EntityManager): Promise<PortHold[]>;
}

/** Registered as `hostPorts` by the kernel. */
export class HostPorts {
  readonly #holders: PortHolder[] = [];

  add(holder: PortHolder): void {
    this.#holders.push(holder);
  }

  /** Every hold on the port except those of `except` (the asking plugin's own kind, judged by its own rules). */
  async holdsExcept(exceptKind: string, port: number, protocol: 'tcp' | 'udp', serverId: string | null, em: EntityManager): Promise<PortHold[]> {
    const all = await Promise.all(this.#holders.map(h => h.holds(port, protocol, serverId, em)));
    return all.flat().filter(h => h.kind !== exceptKind);
  }
}

declare module '@berth/core' {
  interface Cradle {
    hostPorts: HostPorts;
  }
}
