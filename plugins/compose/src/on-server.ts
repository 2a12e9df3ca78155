// A stack on a server. The Compose program (and `docker stack deploy`) runs on Berth's machine and
// resolves a bind mount's relative source against the file's directory there, so the server's
// engine would be asked to bind a path of this machine. Every bind source inside the stack's
// directory (its file mounts under files/, files of the checkout) is therefore copied to the
// server, below the workload's files directory there (removed with the workload), and the
// deployed file names it there. Sources outside the stack's directory (allowed by the host
// access policy) name paths of the server, as they always did. Configs and secrets with `file:`
// are read by `docker stack deploy` on this machine and sent through the engine's API; for the
// Compose program they are bind mounts too, and are placed the same way.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { isMap, isScalar, isSeq, type Document } from 'yaml';
import { composeText, parseCompose, type ComposeType } from './file/index.ts';

export interface Placement {
  /** The file as deployed on the server: the sources inside the stack's directory name their copies there. */
  text: string;
  /** What to copy: a file or directory of this machine, and where it goes on the server (one that does not exist is left to the engine, which makes a directory, as on this machine). */
  copies: { local: string; remote: string }[];
}

const inside = (p: string, dir: string) => p === dir || p.startsWith(dir + path.sep);

/** Rewrites the bind sources inside stackDir to serverDir (the same relative path below it). */
export function placeOnServer(text: string, fileDir: string, stackDir: string, serverDir: string, type: ComposeType): Placement {
  const doc = parseCompose(text);
  const copies = new Map<string, string>();
  /** The server's path for a source inside the stack's directory, else null. */
  const place = (source: string): string | null => {
    if (!/^[.~/]/.test(source) || source.startsWith('~')) return null;
    const local = path.resolve(fileDir, source);
    if (!inside(local, stackDir) || local === stackDir) return null;
    const remote = path.posix.join(serverDir, ...path.relative(stackDir, local).split(path.sep));
    copies.set(local, remote);
    return remote;
  };
  const services = doc.get('services');
  for (const item of isMap(services) ? services.items : []) {
    const volumes = isMap(item.value) ? item.value.get('volumes') : undefined;
    for (const v of isSeq(volumes) ? volumes.items : []) {
      if (isScalar(v) && typeof v.value === 'string') {
        const [source, ...rest] = v.value.split(':');
        const remote = place(source ?? '');
        if (remote) v.value = [remote, ...rest].join(':');
      } else if (isMap(v) && v.get('type') === 'bind') {
        const remote = place(String(v.get('source') ?? ''));
        if (remote) v.set('source', remote);
      }
    }
  }
  if (type === 'docker-compose') for (const key of ['configs', 'secrets']) placeFiles(doc, key, place);
  return { text: composeText(doc), copies: [...copies].map(([local, remote]) => ({ local, remote })) };
}

function placeFiles(doc: Document, key: string, place: (source: string) => string | null): void {
  const section = doc.get(key);
  for (const item of isMap(section) ? section.items : []) {
    const file = isMap(item.value) ? item.value.get('file') : undefined;
    const remote = typeof file === 'string' ? place(file) : null;
    if (remote && isMap(item.value)) item.value.set('file', remote);
  }
}

/** A file or directory of this machine as a tar archive of its last path segment (argument arrays only). */
export function tarOf(local: string, signal?: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('tar', ['-C', path.dirname(local), '-cf', '-', '--', path.basename(local)], { stdio: ['ignore', 'pipe', 'pipe'], signal });
    const out: Buffer[] = [];
    let err = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => (err += c));
    child.on('error', reject);
    child.on('close', code => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`tar of ${local} failed: ${err.trim()}`))));
  });
}

/** The script that unpacks the archive on stdin at its place: the paths are its arguments, never its text. */
export const UNPACK = ['sh', '-c', 'rm -rf -- "$2" && mkdir -p -- "$1" && tar -xf - -C "$1"', 'sh'];
