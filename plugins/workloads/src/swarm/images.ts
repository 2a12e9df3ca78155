// Getting a workload's image onto the engine: pull it (with registry credentials when given);
// when the engine cannot pull but already has the image, use that copy and say so; a server's
// engine that has neither gets the local engine's copy (the fallback: save | load over its
// connection).
import type Docker from 'dockerode';
import type { RegistryAuth } from './runner.ts';

export interface ImageIo {
  signal: AbortSignal;
  log(line: string): void;
  /** When the engine can neither pull the image nor has it: puts a copy there from elsewhere; false when there is none. */
  fallback?: (image: string) => Promise<boolean>;
}

export async function ensureImage(docker: Docker, image: string, auth: RegistryAuth | null | undefined, io: ImageIo): Promise<'pulled' | 'local'> {
  io.log(`Pulling ${image}`);
  try {
    await new Promise<void>((resolve, reject) => {
      docker.pull(image, { ...(auth ? { authconfig: auth } : {}), abortSignal: io.signal }, (err: Error | null, stream?: NodeJS.ReadableStream) => {
        if (err || !stream) return reject(err ?? new Error('no reply from the engine'));
        docker.modem.followProgress(stream, e => (e ? reject(e) : resolve()));
      });
    });
    io.log(`Pulled ${image}`);
    return 'pulled';
  } catch (e) {
    if (io.signal.aborted) throw e;
    const reason = ((e as { json?: { message?: string } }).json?.message ?? (e as Error).message ?? String(e)).trim();
    const local = await docker
      .getImage(image)
      .inspect()
      .then(
        () => true,
        () => false,
      );
    if (!local && io.fallback) {
      io.log(`Could not pull ${image} (${reason}); copying it from Berth's own engine`);
      if (await io.fallback(image)) {
        io.log(`Copied ${image} to the server`);
        return 'local';
      }
    }
    if (!local) throw new Error(`Could not pull ${image} (${reason}), and this host has no copy of it`);
    io.log(`Could not pull ${image} (${reason}); deploying the copy this host already has`);
    return 'local';
  }
}
