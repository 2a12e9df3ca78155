// Memory and CPU amounts as users write them, turned into the engine's units (bytes and
// NanoCPUs), which are also the units the peer system stores and its clients send.
// Memory: bytes (number or digits) or a size with a binary unit as Docker reads it
// (512m = 512 MiB; b/k/m/g/t, optionally followed by b, i or ib; case-insensitive).
// CPU: a number of CPUs ("0.5", 2), or NanoCPUs as the peer's clients send them
// ("2000000000" = 2 CPUs): a value of a million or more cannot be a CPU count.
// Zero, empty or null means "no limit" (null).
import { badRequest } from '@berth/core';

const UNITS: Record<string, number> = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };
const SIZE = /^(\d+(?:\.\d+)?|\.\d+)\s*(?:([bkmgt])(?:i?b)?|([kmgt])i)?$/i;
const NUMBER = /^(?:\d+(?:\.\d*)?|\.\d+)$/;
const NANO = 1e9;
const NANO_CPUS_FROM = 1e6;

/** Bytes, or null for no limit. Accepts 1073741824, "1073741824", "512m", "1.5g", "100k", "512mb", "1gi", "2GiB". */
export function parseMemory(value: string | number | null | undefined, field = 'memory'): number | null {
  if (value === null || value === undefined) return null;
  let bytes: number;
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) throw badMemory(field, value);
    bytes = Math.round(value);
  } else {
    const text = value.trim();
    if (text === '') return null;
    const match = SIZE.exec(text);
    if (!match) throw badMemory(field, value);
    const unit = (match[2] ?? match[3] ?? 'b').toLowerCase();
    bytes = Math.round(Number(match[1]) * UNITS[unit]!);
  }
  if (!Number.isSafeInteger(bytes)) throw badMemory(field, value);
  return bytes === 0 ? null : bytes;
}

/** NanoCPUs (0.5 CPU = 500000000), or null for no limit. */
export function parseCpu(value: string | number | null | undefined, field = 'cpu'): number | null {
  if (value === null || value === undefined) return null;
  let amount: number;
  if (typeof value === 'number') {
    amount = value;
  } else {
    const text = value.trim();
    if (text === '') return null;
    if (!NUMBER.test(text)) throw badCpu(field, value);
    amount = Number(text);
  }
  if (!Number.isFinite(amount) || amount < 0) throw badCpu(field, value);
  if (amount === 0) return null;
  const nanoCpus = Math.round(amount >= NANO_CPUS_FROM ? amount : amount * NANO);
  if (nanoCpus < 1 || !Number.isSafeInteger(nanoCpus)) throw badCpu(field, value);
  return nanoCpus;
}

const issue = (field: string, message: string) => badRequest(message, [{ path: [field], message }]);
const badMemory = (field: string, value: unknown) => issue(field, `Invalid ${field} "${String(value)}": use bytes (1073741824) or a size such as 512m, 1.5g or 2GiB`);
const badCpu = (field: string, value: unknown) => issue(field, `Invalid ${field} "${String(value)}": use a number of CPUs such as 0.5 or 2 (or NanoCPUs such as 2000000000)`);
