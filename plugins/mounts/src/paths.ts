// The strict shapes of what a mount hands to the host: bind sources, volume names, file
// paths under the workload's files directory, and paths inside the container. Checked on the
// record as it will be stored, so an update cannot leave a mount its type cannot use.
import { badRequest, type Issue } from '@berth/core';
import { type MountRecord } from '@berth/plugin-workloads';

export const HOST_PATH = /^\/[A-Za-z0-9._/-]*$/;
export const VOLUME_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$/;
/** Berth's own volumes (the proxy's certificates, ...) are named berth-*: no workload may mount them. */
export const RESERVED_VOLUME = /^berth([-_.]|$)/i;
export const FILE_PATH = /^[A-Za-z0-9._-][A-Za-z0-9._/-]*$/;
const CONTROL = /[\u0000-\u001f\u007f]/;
export const MAX_PATH = 4096;

/**
 * Host paths a bind mount may never use, nor anything beneath them: the kernel's and the
 * engine's interfaces (a container holding /proc, /sys, /dev, the Docker socket or the engine's
 * state is root on the host), the system's configuration, binaries and boot files, and root's
 * home. /run and /var/run hold the Docker socket and other daemons' sockets.
 */
export const DENIED_HOST_TREES = [
  '/proc',
  '/sys',
  '/dev',
  '/boot',
  '/etc',
  '/root',
  '/run',
  '/var/run',
  '/var/lib/docker',
  '/var/lib/containerd',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/usr',
] as const;
/** Host directories that may not be mounted whole (their subdirectories may): they hold every user's or service's data. */
export const DENIED_HOST_PATHS = ['/', '/home', '/var', '/var/lib', '/srv', '/opt', '/mnt', '/media', '/tmp'] as const;

export interface MountShape {
  type: 'bind' | 'volume' | 'file';
  hostPath?: string | null;
  volumeName?: string | null;
  filePath?: string | null;
  content?: string | null;
  mountPath: string;
}

/** A mount as it is stored: the fields its type does not use are null. */
export type StoredMount = Pick<MountRecord, 'type' | 'hostPath' | 'volumeName' | 'filePath' | 'content' | 'mountPath'>;

export interface MountRules {
  /** Further trees a bind mount may not reach (Berth's own data directory, with every workload's files and the secret key). */
  deniedTrees?: readonly string[];
}

const segments = (path: string) => path.split('/').slice(1);
const within = (path: string, tree: string) => path === tree || path.startsWith(tree.endsWith('/') ? tree : `${tree}/`);

/** Why a host path may not be bound, or null when it may. */
export function deniedHostPath(hostPath: string, extraTrees: readonly string[] = []): string | null {
  if ((DENIED_HOST_PATHS as readonly string[]).includes(hostPath)) return `${hostPath} may not be mounted whole (choose a directory beneath it)`;
  const tree = [...DENIED_HOST_TREES, ...extraTrees].find(t => within(hostPath, t));
  return tree ? `${tree} and everything beneath it may not be mounted (it reaches the host's system or Berth's own data)` : null;
}

/**
 * Every problem of the mount, one issue per field (BAD_REQUEST when there is any); else the
 * mount as it will be stored. A file mount without filePath takes its mountPath without the
 * leading "/", so two file mounts of one workload never share a file.
 */
export function checkMount(m: MountShape, rules: MountRules = {}): StoredMount {
  const issues: Issue[] = [];
  const fail = (field: string, message: string) => issues.push({ path: [field], message: `${field}: ${message}` });
  const present = (v: string | null | undefined): v is string => typeof v === 'string' && v !== '';
  const required = (field: string, value: string | null | undefined): value is string => {
    if (!present(value)) fail(field, `required for a ${m.type} mount`);
    return present(value);
  };

  const mountPathIssue = mountPathProblem(m.mountPath);
  if (mountPathIssue) fail('mountPath', mountPathIssue);
  const mountPathOk = !mountPathIssue;

  if (m.type === 'bind' && required('hostPath', m.hostPath)) {
    const p = m.hostPath;
    if (p.length > MAX_PATH) fail('hostPath', `must be at most ${MAX_PATH} characters`);
    else if (!HOST_PATH.test(p)) fail('hostPath', 'must be an absolute path of letters, digits, ".", "_", "-" and "/"');
    else if (p !== '/' && segments(p).some(s => s === '' || s === '.' || s === '..')) fail('hostPath', 'must be a plain absolute path: no "." or ".." segments, no "//", no trailing "/"');
    else {
      const denied = deniedHostPath(p, rules.deniedTrees);
      if (denied) fail('hostPath', denied);
    }
  }

  if (m.type === 'volume' && required('volumeName', m.volumeName)) {
    if (!VOLUME_NAME.test(m.volumeName)) fail('volumeName', 'must start with a letter or digit, then up to 127 letters, digits, "_", "." or "-"');
    else if (RESERVED_VOLUME.test(m.volumeName)) fail('volumeName', 'names starting with "berth" are reserved for the platform\'s own volumes');
  }

  let filePath = m.filePath ?? null;
  if (m.type === 'file') {
    if (!present(filePath) && mountPathOk) filePath = m.mountPath.slice(1);
    if (!present(filePath)) {
      if (mountPathOk) fail('filePath', 'required for a file mount');
    } else if (filePath.length > MAX_PATH) fail('filePath', `must be at most ${MAX_PATH} characters`);
    else if (filePath.startsWith('/')) fail('filePath', "must be relative to the workload's files directory, not absolute");
    else if (!FILE_PATH.test(filePath)) fail('filePath', `must be a relative path of letters, digits, ".", "_", "-" and "/"${m.filePath ? '' : ' (it was taken from mountPath: give filePath)'}`);
    else if (filePath.split('/').some(s => s === '' || s === '.' || s === '..')) fail('filePath', 'must name a file: no "." or ".." segments, no "//", no trailing "/"');
    if (m.content === null || m.content === undefined) fail('content', 'required for a file mount (it may be empty)');
  }

  if (issues.length) throw badRequest('Invalid input data', issues);
  return {
    type: m.type,
    hostPath: m.type === 'bind' ? m.hostPath! : null,
    volumeName: m.type === 'volume' ? m.volumeName! : null,
    filePath: m.type === 'file' ? filePath : null,
    content: m.type === 'file' ? m.content! : null,
    mountPath: m.mountPath,
  };
}

/** The container-side path: absolute, printable, no ".." segments, not "/" itself. */
function mountPathProblem(mountPath: string): string | null {
  if (mountPath.length > MAX_PATH) return `must be at most ${MAX_PATH} characters`;
  if (!mountPath.startsWith('/')) return 'must be an absolute path inside the container';
  if (CONTROL.test(mountPath)) return 'must not contain control characters (NUL, newline, ...)';
  if (segments(mountPath).includes('..')) return 'must not contain ".." segments';
  if (/^\/+$/.test(mountPath)) return 'must not be the container\'s root "/"';
  return null;
}
