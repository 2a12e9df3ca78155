// What every workload kind's API takes alike in its inputs.
import Type from 'typebox';

/** How much of a log readLogs answers: the last `tail` lines, `since` a duration, only the lines containing `search` (linesContaining). */
export const logQuery = () => ({
  tail: Type.Optional(Type.Integer({ minimum: 1, maximum: 10000, default: 100 })),
  since: Type.Optional(Type.String({ pattern: '^(all|\\d+[smhd])$', default: 'all' })),
  search: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9 ._-]{0,500}$' })),
});
