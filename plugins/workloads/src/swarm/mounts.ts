// A workload's mount records as Swarm mounts. File mounts are written first, under the
// workload's own files directory, and bound read-only; bind mounts pass through (the mounts
// plugin checked their paths when they were stored); named volumes are created with the owner's
// labels first (or, existing, checked to be the organization's), so Swarm never makes one
// implicitly, unlabelled, nor mounts one that is not Berth's. A workload on a server has its file
// mounts written on that server (the engine there binds them), below serverFilesDir.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { MountRecord } from '../attachments.ts';
import type { ServiceMount } from '../services.ts';
import type { Engine } from '../lifecycle.ts';
import type { Owner } from '../owners.ts';
import { ensureMountVolume } from './volumes.ts';

/** A file's path under the files directory: relative, no `..` segment. */
const FILE_PATH = /^(?!.*(?:^|\/)\.\.(?:\/|$))[A-Za-z0-9._/-]+$/;

export async function toServiceMounts(
  records: MountRecord[],
  filesDir: string,
  { docker, hosts, serverId = null }: Pick<Engine, 'docker' | 'hosts'> & { serverId?: string | null },
  owner: Owner,
  log: (line: string) => void,
): Promise<ServiceMount[]> {
  const out: ServiceMount[] = [];
  let onServer: Promise<string> | undefined;
  for (const m of records) {
    if (m.type === 'bind') out.push({ type: 'bind', source: m.hostPath!, target: m.mountPath });
    else if (m.type === 'volume') {
      if ((await ensureMountVolume(docker, hosts, m.volumeName!, owner, { adopted: m.volumeAdopted })) === 'created') log(`Created the volume ${m.volumeName}`);
      out.push({ type: 'volume', source: m.volumeName!, target: m.mountPath });
    } else {
      const rel = m.filePath || path.posix.basename(m.mountPath);
      if (!FILE_PATH.test(rel) || rel.startsWith('/')) throw new Error(`The file mount ${m.mountId} has an invalid file path`);
      let file: string;
      if (serverId !== null) {
        onServer ??= serverFilesDir(hosts, serverId, path.basename(path.dirname(filesDir)));
        file = path.posix.join(await onServer, rel);
        await writeOnServer(hosts, serverId, file, m.content ?? '');
      } else {
        file = path.resolve(filesDir, rel);
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, m.content ?? '');
      }
      out.push({ type: 'bind', source: file, target: m.mountPath, readOnly: true, managed: true });
    }
  }
  return out;
}

/** A workload's files directory on a server: `.berth/files/<appName>` in the login's home. */
export async function serverFilesDir(hosts: Engine['hosts'], serverId: string, appName: string): Promise<string> {
  const home = await (await hosts.of(serverId)).run(['sh', '-c', 'printf %s "$HOME"']);
  if (home.code !== 0 || !home.stdout.startsWith('/')) throw new Error(`The login's home on server ${serverId} could not be found: ${home.stderr.trim() || home.stdout}`);
  return path.posix.join(home.stdout, '.berth', 'files', appName);
}

/** Writes a file on the server (its directories made): the path is an argument of a fixed script, the content its stdin. */
async function writeOnServer(hosts: Engine['hosts'], serverId: string, file: string, content: string): Promise<void> {
  const written = await (await hosts.of(serverId)).run(['sh', '-c', 'mkdir -p "$(dirname "$1")" && cat > "$1"', 'sh', file], { stdin: content });
  if (written.code !== 0) throw new Error(`The file mount ${file} could not be written on server ${serverId}: ${written.stderr.trim()}`);
}
