// The audit log's hash chain. Entries are inserted unsealed (no hash: an insert never waits for
// another, and several Berth processes may write); the sealer takes the unsealed rows in insert
// order, under an advisory lock so one process seals at a time, and gives each the next chain index
// and hash = HMAC-SHA256(previous hash || the row's canonical JSON), keyed by a key derived from the
// instance's secret (dataDir/secret.key or BERTH_SECRET, never in the database): one who can write
// the database but lacks the secret cannot rewrite an entry and recompute the chain after it. A row
// that commits late is sealed later: the chain's order is the sealing order. The chain row keeps both ends: the head (the last
// sealed entry: a removed tail shows) and the anchor (the last entry retention removed: verify starts
// after it). verify walks the chain and names the first row edited, removed or out of chain.
import { createHmac } from 'node:crypto';
import type { EntityManager } from '@berth/core';

const SEAL_LOCK = 'berth.audit-log.seal';
const BATCH = 500;
/** The columns a row's hash covers: every stored field but the hash itself (seq is the insert order, not the record). */
const COLUMNS = [
  'id',
  'organization_id',
  'user_id',
  'user_email',
  'user_role',
  'actor',
  'via',
  'credential_id',
  'action',
  'resource_type',
  'resource_id',
  'resource_name',
  'procedure',
  'target_ids',
  'input',
  'outcome',
  'error_code',
  'error_message',
  'request_id',
  'address',
  'user_agent',
  'created_at',
  'chain_index',
] as const;
const SELECT = COLUMNS.map(c => `"${c}"`).join(', ');

type Row = Record<(typeof COLUMNS)[number], unknown> & { hash: string | null };
interface ChainEnds {
  anchor_index: string;
  anchor_hash: string;
  head_index: string;
  head_hash: string;
}

/** JSON with object keys sorted at every level, dates as ISO text: the same bytes for the same row whoever reads it. */
export function canonical(value: unknown): string {
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map(k => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

/** A row's hash after the previous one's, keyed. */
export function rowHash(key: Buffer, previous: string, row: Row): string {
  const fields = Object.fromEntries(COLUMNS.map(c => [c, c === 'chain_index' ? Number(row[c]) : row[c]]));
  return createHmac('sha256', key).update(previous).update('\n').update(canonical(fields)).digest('hex');
}

/** What verify found: ok, or the first break. */
export type Verdict = { ok: true; checked: number; from: number; head: number } | { ok: false; checked: number; problem: string; entryId?: string; chainIndex?: number };

/** The ends of a chain with no entry sealed yet. */
const EMPTY_ENDS: ChainEnds = { anchor_index: '0', anchor_hash: '', head_index: '0', head_hash: '' };

/**
 * The chain's ends, locked for the transaction, made on first use: no migration writes the row, so a
 * new database holds no record (`berth db copy` copies only into an empty one).
 */
async function lockedEnds(conn: ReturnType<EntityManager['getConnection']>, ctx: unknown): Promise<ChainEnds> {
  await conn.execute(`insert into audit_log_chain (key, anchor_index, anchor_hash, head_index, head_hash) values ('chain', 0, '', 0, '') on conflict (key) do nothing`, [], 'run', ctx);
  const [ends] = await conn.execute<ChainEnds[]>(`select * from audit_log_chain where key = 'chain' for update`, [], 'all', ctx);
  return ends!;
}

export class AuditChain {
  readonly #em: () => EntityManager;
  readonly #key: Buffer;

  /** `key`: the chain's HMAC key (SecretBox.deriveKey('audit-log-chain')). */
  constructor(em: () => EntityManager, key: Buffer) {
    this.#em = em;
    this.#key = key;
  }

  /** Seals every row committed unsealed; answers how many. */
  async seal(): Promise<number> {
    let sealed = 0;
    for (;;) {
      const n = await this.#em().transactional(async tx => {
        const conn = tx.getConnection();
        const ctx = tx.getTransactionContext();
        await conn.execute('select pg_advisory_xact_lock(hashtext(?))', [SEAL_LOCK], 'all', ctx);
        // The e-mail of the user who acted, as it is now: kept with the entry from here on.
        await conn.execute(`update audit_log a set user_email = u.email from users u where a.chain_index is null and a.user_email is null and a.user_id = u.id`, [], 'run', ctx);
        const rows = await conn.execute<Row[]>(`select ${SELECT}, hash from audit_log where chain_index is null order by seq limit ${BATCH}`, [], 'all', ctx);
        if (!rows.length) return 0;
        const ends = await lockedEnds(conn, ctx);
        let index = Number(ends.head_index);
        let previous = ends.head_hash;
        const sealed: { id: string; ci: number; h: string }[] = [];
        for (const row of rows) {
          row.chain_index = ++index;
          previous = rowHash(this.#key, previous, row);
          sealed.push({ id: row.id as string, ci: index, h: previous });
        }
        await conn.execute(
          `update audit_log a set chain_index = v.ci, hash = v.h from jsonb_to_recordset(?::jsonb) as v(id text, ci bigint, h text) where a.id = v.id`,
          [JSON.stringify(sealed)],
          'run',
          ctx,
        );
        await conn.execute(`update audit_log_chain set head_index = ?, head_hash = ? where key = 'chain'`, [index, previous], 'run', ctx);
        return rows.length;
      });
      sealed += n;
      if (n < BATCH) return sealed;
    }
  }

  /** Walks the chain from its anchor to its head; the first row edited, removed or out of chain is the verdict. */
  async verify(): Promise<Verdict> {
    await this.seal();
    const conn = this.#em().getConnection();
    const [stored] = await conn.execute<ChainEnds[]>(`select * from audit_log_chain where key = 'chain'`);
    // Made at the first seal: none yet is an empty chain, unless sealed entries say its ends were removed.
    if (!stored) {
      const [sealedOne] = await conn.execute<{ id: string }[]>(`select id from audit_log where chain_index is not null limit 1`);
      if (sealedOne) return { ok: false, checked: 0, entryId: sealedOne.id, problem: "the chain's ends (table audit_log_chain) were removed while sealed entries remain" };
    }
    const ends = stored ?? EMPTY_ENDS;
    const from = Number(ends.anchor_index);
    let expected = from + 1;
    let previous = ends.anchor_hash;
    let checked = 0;
    const [stray] = await conn.execute<{ id: string; chain_index: string | null }[]>(
      `select id, chain_index from audit_log where (chain_index is null) <> (hash is null) or chain_index <= ? order by seq limit 1`,
      [from],
    );
    if (stray)
      return {
        ok: false,
        checked,
        entryId: stray.id,
        problem: `entry ${stray.id} is out of the chain (${stray.chain_index === null ? 'a hash without a chain index' : `chain index ${stray.chain_index}, at or before the anchor ${from}`})`,
      };
    for (let last = from; ;) {
      const rows = await conn.execute<Row[]>(`select ${SELECT}, hash from audit_log where chain_index > ? order by chain_index limit 1000`, [last]);
      if (!rows.length) break;
      for (const row of rows) {
        const index = Number(row.chain_index);
        if (index !== expected)
          return {
            ok: false,
            checked,
            chainIndex: expected,
            entryId: row.id as string,
            problem: `entries ${expected}${index - 1 > expected ? `–${index - 1}` : ''} of the chain were removed (the next is entry ${row.id as string}, chain index ${index})`,
          };
        if (rowHash(this.#key, previous, row) !== row.hash)
          return { ok: false, checked, chainIndex: index, entryId: row.id as string, problem: `entry ${row.id as string} (chain index ${index}) was edited: its hash does not match its fields` };
        previous = row.hash;
        expected++;
        checked++;
      }
      last = expected - 1;
    }
    const head = Number(ends.head_index);
    if (expected - 1 !== head || previous !== ends.head_hash)
      return { ok: false, checked, chainIndex: expected, problem: `entries ${expected}–${head} at the end of the chain were removed (the chain's head is ${head})` };
    return { ok: true, checked, from, head };
  }

  /**
   * Removes the sealed entries older than `before`, a prefix of the chain (up to the first entry that
   * is not old enough), and moves the anchor to the last one removed. Answers how many.
   */
  async prune(before: Date): Promise<number> {
    await this.seal();
    return this.#em().transactional(async tx => {
      const conn = tx.getConnection();
      const ctx = tx.getTransactionContext();
      await conn.execute('select pg_advisory_xact_lock(hashtext(?))', [SEAL_LOCK], 'all', ctx);
      const [end] = await conn.execute<{ last: string | null }[]>(
        `select coalesce((select min(chain_index) - 1 from audit_log where chain_index is not null and created_at >= ?),
                         (select max(chain_index) from audit_log where chain_index is not null)) as last`,
        [before],
        'all',
        ctx,
      );
      const last = end?.last === null || end?.last === undefined ? null : Number(end.last);
      const ends = await lockedEnds(conn, ctx);
      if (last === null || last <= Number(ends.anchor_index)) return 0;
      const [anchor] = await conn.execute<{ hash: string; created_at: Date }[]>(`select hash, created_at from audit_log where chain_index = ?`, [last], 'all', ctx);
      if (!anchor) return 0;
      await conn.execute(`update audit_log_chain set anchor_index = ?, anchor_hash = ?, anchor_at = ? where key = 'chain'`, [last, anchor.hash, anchor.created_at], 'run', ctx);
      const removed = await conn.execute<{ affectedRows?: number }>(`delete from audit_log where chain_index is not null and chain_index <= ?`, [last], 'run', ctx);
      return (removed as { affectedRows?: number }).affectedRows ?? 0;
    });
  }
}
