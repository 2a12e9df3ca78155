// What a cleanup removes on one engine, computed before anything is removed: per step the objects
// and the bytes they hold, so that a dry run answers exactly what the run then removes. The run
// removes those objects one by one (never a blanket prune, which would take what Berth must keep):
// - containers: stopped ones (exited, created, dead); bytes = their writable layer;
// - images: those no remaining container and no swarm service uses (a stopped service keeps its
//   image) and no kept release holds (keptImages: the rollback tags); bytes = the layers no kept
//   image shares (layers are counted by chain id);
// - volumes: those no container mounts; bytes = their usage;
// - builder: the build cache not in use (removed by the engine's prune: it keeps no owners).
// Whatever `keep` says is owned (a live record's, another organization's) is never in the plan.
import { createHash } from 'node:crypto';
import type Docker from 'dockerode';

export const STEPS = ['containers', 'images', 'volumes', 'builder'] as const;
export type Step = (typeof STEPS)[number];

export interface PlannedObject {
  id: string;
  name: string;
  bytes: number;
}

export interface StepPlan {
  step: Step;
  objects: PlannedObject[];
  bytes: number;
}

/** Whether an object carrying these labels must stay (a live record's, another organization's). */
export type Keep = (labels: Record<string, string> | null | undefined) => Promise<boolean>;

type Call = <T>(what: string, fn: () => Promise<T>) => Promise<T>;

interface Df {
  LayersSize?: number;
  Images?: { Id: string; Size: number }[] | null;
  Volumes?: { Name: string; Labels?: Record<string, string> | null; UsageData?: { Size: number; RefCount: number } | null }[] | null;
  BuildCache?: { ID: string; Size: number; InUse: boolean; Shared?: boolean; Description?: string }[] | null;
}

/** The engine's disk usage as `docker system df` sums it, in bytes. */
export interface DiskUsage {
  images: number;
  containers: number;
  volumes: number;
  builder: number;
}

/**
 * While another df runs on the engine (anyone's), it refuses one more: 409 on current engines, a
 * 500 saying so on 20.10's. Either is waited out.
 */
const dfBusy = (e: unknown) => {
  const { statusCode, message } = e as { statusCode?: number; message?: unknown };
  return statusCode === 409 || (statusCode === 500 && /a disk usage operation is already running/.test(String(message)));
};

/** The engine's df, waiting out another df running on it. */
export async function readDf<T = Df>(docker: Docker, call: Call, what: string): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return (await docker.df()) as T;
    } catch (e) {
      if (!dfBusy(e) || attempt >= 50) return call(what, () => Promise.reject(e));
      await new Promise(r => setTimeout(r, 200));
    }
  }
}

export async function diskUsage(docker: Docker, call: Call): Promise<DiskUsage> {
  const df = (await readDf(docker, call, 'read the disk usage')) as Df & { Containers?: { SizeRw?: number }[] | null };
  return {
    images: df.LayersSize ?? 0,
    containers: (df.Containers ?? []).reduce((s, c) => s + (c.SizeRw ?? 0), 0),
    volumes: (df.Volumes ?? []).reduce((s, v) => s + Math.max(0, v.UsageData?.Size ?? 0), 0),
    builder: (df.BuildCache ?? []).reduce((s, b) => s + (b.Shared ? 0 : b.Size), 0),
  };
}

const STOPPED = new Set(['exited', 'created', 'dead']);

/** The plan of `steps` on the engine, in order (images after containers: an image used only by a removed container goes too). */
export async function planCleanup(docker: Docker, steps: readonly Step[], keep: Keep, call: Call, keptImages: ReadonlySet<string> = new Set()): Promise<StepPlan[]> {
  const containers = await call('list the containers', () => docker.listContainers({ all: true, size: true }));
  const removedContainers = new Set<string>();
  const out: StepPlan[] = [];
  for (const step of steps) {
    let objects: PlannedObject[] = [];
    if (step === 'containers') {
      for (const c of containers) {
        if (!STOPPED.has(c.State) || (await keep(c.Labels))) continue;
        removedContainers.add(c.Id);
        objects.push({ id: c.Id, name: (c.Names?.[0] ?? c.Id).replace(/^\//, ''), bytes: (c as { SizeRw?: number }).SizeRw ?? 0 });
      }
    } else if (step === 'images') {
      objects = await planImages(
        docker,
        containers.filter(c => !removedContainers.has(c.Id)),
        keep,
        call,
        keptImages,
      );
    } else if (step === 'volumes') {
      const df = await readDf(docker, call, 'read the volumes');
      const mounted = new Set(containers.filter(c => !removedContainers.has(c.Id)).flatMap(c => (c.Mounts ?? []).map(m => m.Name).filter(Boolean)));
      for (const v of df.Volumes ?? []) {
        if (mounted.has(v.Name) || (v.UsageData?.RefCount ?? 0) > 0 || (await keep(v.Labels))) continue;
        objects.push({ id: v.Name, name: v.Name, bytes: Math.max(0, v.UsageData?.Size ?? 0) });
      }
    } else {
      const df = await readDf(docker, call, 'read the build cache');
      objects = (df.BuildCache ?? []).filter(b => !b.InUse).map(b => ({ id: b.ID, name: b.Description ?? b.ID, bytes: b.Shared ? 0 : b.Size }));
    }
    objects.sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    out.push({ step, objects, bytes: objects.reduce((s, o) => s + o.bytes, 0) });
  }
  return out;
}

/** A service's image reference without its digest, with the tag docker assumes. */
function plainRef(ref: string): string {
  const noDigest = ref.split('@')[0]!;
  const last = noDigest.split('/').pop()!;
  return last.includes(':') ? noDigest : `${noDigest}:latest`;
}

const METADATA = /#\(nop\)\s+(?!ADD|COPY)|^(LABEL|ENV|CMD|ENTRYPOINT|EXPOSE|WORKDIR|USER|VOLUME|STOPSIGNAL|HEALTHCHECK|SHELL|ONBUILD|ARG|MAINTAINER)\b/;

/** Each layer of an image by chain id (how the engine stores it) with its size, read from the image's history. */
async function layersOf(docker: Docker, id: string, call: Call): Promise<Map<string, number>> {
  const [inspect, history] = await Promise.all([
    call(`inspect image ${id}`, () => docker.getImage(id).inspect()),
    call(`read the history of image ${id}`, () => docker.getImage(id).history() as Promise<{ CreatedBy?: string; Size: number }[]>),
  ]);
  const diffs = inspect.RootFS?.Layers ?? [];
  const oldestFirst = [...history].reverse();
  let sizes = oldestFirst.filter(h => !METADATA.test(h.CreatedBy ?? '')).map(h => h.Size);
  if (sizes.length !== diffs.length) sizes = oldestFirst.filter(h => h.Size > 0).map(h => h.Size);
  if (sizes.length !== diffs.length) sizes = diffs.map((_, i) => (i === diffs.length - 1 ? inspect.Size : 0)); // unreadable history: the whole size on the top layer
  const out = new Map<string, number>();
  let chain = '';
  diffs.forEach((diff, i) => {
    chain = chain ? `sha256:${createHash('sha256').update(`${chain} ${diff}`).digest('hex')}` : diff;
    out.set(chain, sizes[i] ?? 0);
  });
  return out;
}

async function planImages(docker: Docker, remaining: Docker.ContainerInfo[], keep: Keep, call: Call, keptImages: ReadonlySet<string>): Promise<PlannedObject[]> {
  const images = await call('list the images', () => docker.listImages({ all: false }));
  const services = await call('list the services', () => docker.listServices()).catch(() => [] as Docker.Service[]);
  const usedIds = new Set(remaining.map(c => c.ImageID));
  const serviceRefs = new Set(services.map(s => (s.Spec as { TaskTemplate?: { ContainerSpec?: { Image?: string } } })?.TaskTemplate?.ContainerSpec?.Image).filter((r): r is string => Boolean(r)));
  const serviceTags = new Set([...serviceRefs].flatMap(r => [plainRef(r), plainRef(r).replace(/^docker\.io\/(library\/)?/, '')]));
  const serviceDigests = new Set([...serviceRefs].filter(r => r.includes('@')).map(r => r.split('@')[1]!));
  const removable: Docker.ImageInfo[] = [];
  const kept: Docker.ImageInfo[] = [];
  for (const image of images) {
    const byService = (image.RepoTags ?? []).some(t => serviceTags.has(t)) || (image.RepoDigests ?? []).some(d => serviceDigests.has(d.split('@')[1]!));
    // A release kept to roll back to (the rollback plugin's tag) stays while it is one.
    const release = (image.RepoTags ?? []).some(t => keptImages.has(t));
    if (usedIds.has(image.Id) || byService || release || (await keep(image.Labels))) kept.push(image);
    else removable.push(image);
  }
  const keptLayers = new Set<string>();
  for (const image of kept) for (const chain of (await layersOf(docker, image.Id, call)).keys()) keptLayers.add(chain);
  // A layer shared by two removable images is counted once, on the first that holds it.
  const counted = new Set<string>();
  const out: PlannedObject[] = [];
  for (const image of removable) {
    let bytes = 0;
    for (const [chain, size] of await layersOf(docker, image.Id, call)) {
      if (keptLayers.has(chain) || counted.has(chain)) continue;
      counted.add(chain);
      bytes += size;
    }
    const tags = (image.RepoTags ?? []).filter(t => t !== '<none>:<none>');
    out.push({ id: image.Id, name: tags[0] ?? image.Id, bytes });
  }
  return out;
}

/** Removes what the plan names; answers per step what was removed (an object already gone counts as removed) and the failures. */
export async function removePlanned(docker: Docker, plan: StepPlan[], log: (line: string) => void, signal?: AbortSignal): Promise<{ removed: StepPlan[]; failures: string[] }> {
  const failures: string[] = [];
  const removed: StepPlan[] = [];
  const gone = (e: unknown) => (e as { statusCode?: number }).statusCode === 404;
  for (const step of plan) {
    signal?.throwIfAborted();
    const done: PlannedObject[] = [];
    if (step.step === 'builder') {
      if (step.objects.length) {
        // cast: dockerode's types know neither the options nor the answer of pruneBuilder.
        const answer = (await docker.pruneBuilder({ all: true } as never)) as unknown as { SpaceReclaimed?: number };
        log(`builder: the engine reclaimed ${answer.SpaceReclaimed ?? 0} bytes`);
      }
      done.push(...step.objects);
    } else {
      let pending = [...step.objects];
      // Images: a parent goes after its children; repeat while something moves.
      for (let round = 0; pending.length && round < 5; round++) {
        const next: PlannedObject[] = [];
        for (const o of pending) {
          signal?.throwIfAborted();
          try {
            if (step.step === 'containers') await docker.getContainer(o.id).remove({ v: false });
            else if (step.step === 'images') await docker.getImage(o.id).remove({ force: true, noprune: false });
            else await docker.getVolume(o.id).remove();
            done.push(o);
          } catch (e) {
            if (gone(e)) done.push(o);
            else if (step.step === 'images' && (e as { statusCode?: number }).statusCode === 409 && round < 4) next.push(o);
            else failures.push(`${step.step}: ${o.name}: ${(e as Error).message}`);
          }
        }
        pending = next;
      }
    }
    removed.push({ step: step.step, objects: done, bytes: done.reduce((s, o) => s + o.bytes, 0) });
  }
  return { removed, failures };
}
