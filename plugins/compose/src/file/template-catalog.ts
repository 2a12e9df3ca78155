// The template catalog in the peer's format (the Dokploy/templates repository): a root
// `meta.json` (an array of the templates' metadata) and per template `blueprints/<id>/` with
// `docker-compose.yml`, `template.toml` and its own `meta.json`. A source is a directory on this
// host or an http(s) base URL serving the same layout. A directory without a root meta.json is
// scanned (each blueprint's meta.json, or its id alone); a URL needs the root meta.json.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

export interface Template {
  id: string;
  name: string;
  description: string;
  version: string;
  logo: string | null;
  links: Record<string, string>;
  tags: string[];
}

/** A template id: it becomes a path segment and a URL segment. */
export const TEMPLATE_ID = /^[a-zA-Z0-9][a-zA-Z0-9._-]{0,99}$/;

/** The largest file read from a source (a meta.json of every template is well under it). */
const MAX_BYTES = 8 * 1024 * 1024;
const TIMEOUT_MS = 10_000;

const isUrl = (source: string) => /^https?:\/\//i.test(source);

/** A file of the source, by its path under the source's root; null when it does not exist. */
export async function readSourceFile(source: string, relative: string): Promise<string | null> {
  if (isUrl(source)) {
    const url = `${source.replace(/\/+$/, '')}/${relative.split('/').map(encodeURIComponent).join('/')}`;
    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS), redirect: 'follow' });
    } catch (e) {
      throw new Error(`The template source ${source} did not answer for ${relative}: ${(e as Error).message}`);
    }
    if (response.status === 404) return null;
    if (!response.ok) throw new Error(`The template source ${source} answered ${response.status} for ${relative}`);
    const length = Number(response.headers.get('content-length') ?? 0);
    if (length > MAX_BYTES) throw new Error(`The template source's ${relative} is larger than ${MAX_BYTES} bytes`);
    const text = await response.text();
    if (text.length > MAX_BYTES) throw new Error(`The template source's ${relative} is larger than ${MAX_BYTES} bytes`);
    return text;
  }
  if (!path.isAbsolute(source)) throw new Error(`The template source "${source}" must be an absolute directory or an http(s) URL`);
  try {
    return await readFile(path.join(source, relative), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw new Error(`The template source ${source} could not be read (${relative}): ${(e as Error).message}`);
  }
}

const str = (v: unknown, fallback = '') => (typeof v === 'string' ? v : fallback);

/** One template's metadata in Berth's shape (missing fields get empty values, never undefined). */
export function templateOf(raw: unknown, id?: string): Template | null {
  const m = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const templateId = str(m.id, id ?? '');
  if (!TEMPLATE_ID.test(templateId)) return null;
  const links =
    m.links && typeof m.links === 'object' ? (Object.fromEntries(Object.entries(m.links as Record<string, unknown>).filter(([, v]) => typeof v === 'string')) as Record<string, string>) : {};
  return {
    id: templateId,
    name: str(m.name, templateId),
    description: str(m.description),
    version: str(m.version, 'latest'),
    logo: typeof m.logo === 'string' && m.logo ? m.logo : null,
    links,
    tags: Array.isArray(m.tags) ? m.tags.filter((t): t is string => typeof t === 'string') : [],
  };
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${what} is not valid JSON: ${(e as Error).message}`);
  }
}

/** The templates of a source, sorted by id. */
export async function loadCatalog(source: string): Promise<Template[]> {
  const meta = await readSourceFile(source, 'meta.json');
  let templates: Template[];
  if (meta !== null) {
    const list = parseJson(meta, `The template source's meta.json`);
    if (!Array.isArray(list)) throw new Error(`The template source's meta.json must be a list of templates`);
    templates = list.map(t => templateOf(t)).filter((t): t is Template => t !== null);
  } else if (isUrl(source)) {
    throw new Error(`The template source ${source} has no meta.json`);
  } else {
    let ids: string[];
    try {
      ids = (await readdir(path.join(source, 'blueprints'), { withFileTypes: true })).filter(d => d.isDirectory() && TEMPLATE_ID.test(d.name)).map(d => d.name);
    } catch {
      throw new Error(`The template source ${source} has neither a meta.json nor a blueprints/ directory`);
    }
    templates = [];
    for (const id of ids) {
      const own = await readSourceFile(source, `blueprints/${id}/meta.json`);
      const t = templateOf(own === null ? {} : parseJson(own, `blueprints/${id}/meta.json`), id);
      if (t) templates.push({ ...t, id });
    }
  }
  const seen = new Set<string>();
  return templates.filter(t => !seen.has(t.id) && seen.add(t.id)).sort((a, b) => a.id.localeCompare(b.id));
}
