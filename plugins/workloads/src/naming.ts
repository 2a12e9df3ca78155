// appNames Berth makes up when a workload is created without one: a clean slug of its name
// (optionally after a prefix such as the database kind) and a random suffix — a valid Swarm
// service name, almost surely unique; uniqueness itself is still checked per host.
import { randomBytes } from 'node:crypto';

export function generateAppName(name: string, prefix?: string): string {
  const slug = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  const head = [prefix, slug].filter(Boolean).join('-') || 'app';
  return `${head.slice(0, 55).replace(/-+$/, '')}-${randomBytes(3).toString('hex')}`;
}
