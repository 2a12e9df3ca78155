// The template catalog (config `templatesSource`, env BERTH_TEMPLATES; default: the repository's
// examples/templates) and the peer's base64 templates ({"compose", "config"}: a compose file and
// its template.toml). A base64 template is laid out as a one-template catalog in a temporary
// directory, so both go through the same processing of the compose-file module.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { badRequest, invalidField, type Cradle } from '@berth/core';
import { loadCatalog, processTemplate, type Template } from './file/index.ts';

/** The catalog shipped with the repository. */
export const DEFAULT_TEMPLATES = fileURLToPath(new URL('../../../examples/templates', import.meta.url));

export type Processed = Awaited<ReturnType<typeof processTemplate>>;

/** The configured catalog, or the one the caller names (a directory or http(s) URL). */
export function catalogSource(cradle: Cradle, baseUrl?: string): string {
  if (baseUrl) {
    if (!/^https?:\/\//.test(baseUrl)) throw invalidField('baseUrl', 'must be an http(s) URL');
    return baseUrl;
  }
  return cradle.config.templatesSource ?? DEFAULT_TEMPLATES;
}

export async function templates(source: string): Promise<(Template & { logo: string })[]> {
  try {
    // The peer's catalog always names a logo.
    return (await loadCatalog(source)).map(t => ({ ...t, logo: t.logo ?? '' }));
  } catch (e) {
    throw badRequest(`The template catalog ${source} cannot be read: ${(e as Error).message}`);
  }
}

export async function fromCatalog(source: string, id: string, vars: { domainBase: string; appName: string }): Promise<Processed> {
  try {
    return await processTemplate(source, id, vars);
  } catch (e) {
    throw invalidField('id', `template "${id}" cannot be processed: ${(e as Error).message}`);
  }
}

/** The peer's base64 template, processed for appName. */
export async function fromBase64(base64: string, vars: { domainBase: string; appName: string }): Promise<Processed> {
  let data: { compose?: unknown; config?: unknown };
  try {
    data = JSON.parse(Buffer.from(base64, 'base64').toString('utf8'));
  } catch {
    throw invalidField('base64', 'is not base64 of a JSON object');
  }
  if (typeof data.compose !== 'string' || typeof data.config !== 'string') throw invalidField('base64', 'must hold {"compose": "<compose file>", "config": "<template.toml>"}');
  const dir = await mkdtemp(path.join(tmpdir(), 'berth-template-'));
  try {
    const bp = path.join(dir, 'blueprints', 'imported');
    await mkdir(bp, { recursive: true });
    await writeFile(path.join(bp, 'docker-compose.yml'), data.compose);
    await writeFile(path.join(bp, 'template.toml'), data.config);
    await writeFile(path.join(dir, 'meta.json'), JSON.stringify([{ id: 'imported', name: 'imported', description: '', version: '', logo: null, links: {}, tags: [] }]));
    return await processTemplate(dir, 'imported', vars);
  } catch (e) {
    throw invalidField('base64', `the template cannot be processed: ${(e as Error).message}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
