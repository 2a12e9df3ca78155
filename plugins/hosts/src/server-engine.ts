// What a server's engine needs before workloads run on it, and what reaches it from this machine:
// - prepared like the local one on first use: swarm mode (advertising the server's own address)
//   when not active, refused when it is a worker, and the platform network ensured;
// - images copied from the local engine (`docker save | docker load`, streamed over the server's
//   pooled connection) when the server lacks one and no registry provides it;
// - a unix socket on this machine that forwards each connection to the server's engine, so that
//   programs Berth runs here (the Compose program, `docker stack deploy`) drive the server's
//   engine with their build contexts streamed over the connection and no file, key or credential
//   written on the server.
import { mkdtemp, rm } from 'node:fs/promises';
import { lookup } from 'node:dns/promises';
import { isIP, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { BerthError, type Logger } from '@berth/core';
import { ensurePlatformNetwork } from './platform-network.ts';

type Call = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

/** Puts an engine in swarm mode (advertising `advertiseAddr`) unless it is, refuses a worker, and ensures the platform network. */
export async function prepareEngine(docker: Docker, o: { call: Call; log: Logger; advertiseAddr: string; network: string; where: string }): Promise<void> {
  const swarm = async () => (await o.call(`reach the Docker engine of ${o.where}`, () => docker.info() as Promise<{ Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } }>)).Swarm;
  let state = await swarm();
  if (state?.LocalNodeState !== 'active') {
    o.log.info({ advertiseAddr: o.advertiseAddr, where: o.where }, 'initialising swarm mode');
    await o
      .call(`initialise swarm mode on ${o.where}`, () => docker.swarmInit({ ListenAddr: '0.0.0.0:2377', AdvertiseAddr: o.advertiseAddr }))
      .catch(async (e: unknown) => {
        // Another process (a second Berth, an operator) initialised it between the read and the
        // init ("already part of a swarm"): the swarm it made is taken, as if it had been there.
        state = await swarm();
        if (state?.LocalNodeState !== 'active') throw e;
      });
  }
  if (state?.LocalNodeState === 'active' && state.ControlAvailable === false) {
    throw new BerthError('INTERNAL_SERVER_ERROR', `The Docker engine of ${o.where} is a swarm worker; Berth needs a manager`);
  }
  await ensurePlatformNetwork(docker, o.call, o.network, o.log);
}

/** The address swarm mode advertises for a server: its record's IP, or what its DNS name resolves to (the engine takes no name). */
export async function advertiseAddress(ipAddress: string): Promise<string> {
  return isIP(ipAddress) ? ipAddress : (await lookup(ipAddress)).address;
}

/** Whether the engine has the image (by name or id). */
export async function hasImage(docker: Docker, image: string): Promise<boolean> {
  return docker
    .getImage(image)
    .inspect()
    .then(
      () => true,
      (e: { statusCode?: number }) => (e.statusCode === 404 ? false : Promise.reject(e)),
    );
}

/**
 * Copies an image of the `from` engine into `to` (save streamed into load, nothing on disk);
 * answers false when `from` has no such image.
 */
export async function copyImage(from: Docker, to: Docker, image: string, signal?: AbortSignal): Promise<boolean> {
  if (!(await hasImage(from, image))) return false;
  signal?.throwIfAborted();
  const saved = (await from.getImage(image).get()) as NodeJS.ReadableStream & { destroy?(e?: Error): void };
  const onAbort = () => saved.destroy?.(signal!.reason as Error);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const reply = (await to.loadImage(saved, { quiet: true })) as NodeJS.ReadableStream;
    // The engine answers a JSON stream; a failed load says so in an "error" line.
    await new Promise<void>((resolve, reject) =>
      to.modem.followProgress(reply, (err: Error | null, out: { error?: string }[]) => {
        const failed = err?.message ?? out?.find(l => l.error)?.error;
        failed ? reject(new Error(`loading ${image} failed: ${failed}`)) : resolve();
      }),
    );
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (!(await hasImage(to, image))) throw new Error(`${image} was sent to the server's engine but is not there`);
  return true;
}

/** A unix socket on this machine whose every connection is piped into a fresh stream to a server's engine. */
export class EngineSocket {
  readonly path: string;
  readonly #server: Server;
  readonly #dir: string;
  readonly #open = new Set<Duplex>();

  private constructor(dir: string, dial: () => Promise<Duplex>, log: Logger) {
    this.#dir = dir;
    this.path = path.join(dir, 'docker.sock');
    this.#server = createServer(local => {
      this.#open.add(local);
      local.pause();
      dial().then(
        remote => {
          local.on('close', () => {
            this.#open.delete(local);
            remote.destroy();
          });
          local.on('error', () => remote.destroy());
          remote.on('close', () => local.destroy());
          remote.on('error', () => local.destroy());
          local.pipe(remote);
          remote.pipe(local);
          local.resume();
        },
        (e: Error) => {
          log.warn({ err: e }, "a connection to a server's engine could not be opened");
          this.#open.delete(local);
          local.destroy();
        },
      );
    });
  }

  /** Listens in a fresh directory only root can enter (the socket is as good as the engine itself). */
  static async open(dial: () => Promise<Duplex>, log: Logger): Promise<EngineSocket> {
    const socket = new EngineSocket(await mkdtemp(path.join(tmpdir(), 'berth-engine-')), dial, log);
    await new Promise<void>((resolve, reject) => {
      socket.#server.once('error', reject);
      socket.#server.listen(socket.path, () => resolve());
    });
    return socket;
  }

  /** Stops listening, ends what is open and removes the directory. */
  async close(): Promise<void> {
    for (const s of this.#open) s.destroy();
    await new Promise<void>(resolve => this.#server.close(() => resolve()));
    await rm(this.#dir, { recursive: true, force: true });
  }
}
