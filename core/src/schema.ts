// Small schema builders used across plugins, so the same constraint is written once.
import Type, { type TSchema } from 'typebox';

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
/** A string of at least one character (the spec's "min length 1"). */
export const NonEmpty = (opts: object = {}) => Type.String({ minLength: 1, ...opts });
/** A string stored in a varchar(255) column (the ORM's default): no longer than the column. */
export const Column = (opts: object = {}) => Type.String({ maxLength: 255, ...opts });
/** Timestamps are ISO 8601 strings on the wire. */
export const Timestamp = () => Type.String({ format: 'date-time' });
/**
 * appName as the spec states it (length 1..63, characters a-z A-Z 0-9 . _ -). What reaches the
 * host is stricter — a Swarm service name: no dots, starting and ending with a letter or digit —
 * and is checked by the workload plugins with checkServiceName(value, 'appName').
 */
export const AppName = () => Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-zA-Z0-9._-]+$' });
/** An e-mail address (JSON Schema format "email"). */
export const Email = () => Type.String({ format: 'email', minLength: 1 });
export const Status = () => Type.Enum(['idle', 'running', 'done', 'error']);
/** Search paging, as the peer's *.search operations take it. */
export const Paging = { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })), offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 })) };
/** A git branch name, as the peer's branch fields take it (null: none chosen). */
export const BranchName = () => Nullable(Type.String({ minLength: 1, maxLength: 255, pattern: '^[a-zA-Z0-9._\\-/#]+$' }));
export const Ok = () => Type.Boolean({ description: 'true when done' });
