// The enabled forges as a kind's fields see them (application, compose, a third party's kind):
// each forge that names its source fields is a source type, and a forge the kind's field table
// does not know (one written out of tree) brings its source fields — free text, its branch a
// branch name, null until set — kept in the settings JSON beside the table's own.
import { schema, Type, type Cradle, type GitSourceFields } from '@berth/core';
import type { FieldTable } from './field-table.ts';
import { GIT_SOURCE_CLEARED } from './git-source.ts';

/** A branch name, as the peer's branch fields take it (the kernel's schema). */
export const BranchName = schema.BranchName;

/** An enabled forge that is a source type: its id, its label and the workload fields that name what to clone. */
export interface ForgeSource {
  id: string;
  label: string;
  fields: GitSourceFields;
}

/** The enabled forges that name their source fields (the git provider plugin makes each a source type). */
export const forgeSources = (providers: Pick<Cradle['providers'], 'all'>): ForgeSource[] =>
  providers.all('git').flatMap(p => (p.sourceFields ? [{ id: p.id, label: p.label, fields: p.sourceFields }] : []));

/** A forge's source fields as a field table: its connection, owner, repository, build path (path, slug) as text, its branch a branch name; each null until set. */
export const forgeFieldTable = (f: GitSourceFields): FieldTable => ({
  ...Object.fromEntries([f.id, f.owner, f.repository, f.buildPath, ...(f.path ? [f.path] : []), ...(f.slug ? [f.slug] : [])].map(k => [k, [schema.Nullable(Type.String({ maxLength: 1024 })), null]])),
  [f.branch]: [BranchName(), null],
});

/**
 * The source fields of the forges `table` does not know — a forge whose connection field is not in
 * it (one written out of tree) — that it does not hold already; the peer's forges keep the table's
 * own fields (their names, types and defaults).
 */
export const unknownForgeFields = (table: FieldTable, forges: readonly ForgeSource[]): FieldTable =>
  Object.fromEntries(
    forges
      .filter(f => !(f.fields.id in table))
      .flatMap(f => Object.entries(forgeFieldTable(f.fields)))
      .filter(([k]) => !(k in table)),
  );

/** Every git source field forgotten, the peer's and each enabled forge's: what disconnectGitProvider changes, besides a kind's own. */
export const gitSourceCleared = (forges: readonly ForgeSource[]): Record<string, null> => ({
  ...Object.fromEntries(forges.flatMap(({ fields: f }) => [f.id, f.owner, f.repository, f.branch]).map(k => [k, null])),
  ...GIT_SOURCE_CLEARED,
});
