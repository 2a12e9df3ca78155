// The address ranges a network's IPAM names, read before the engine sees them: a subnet is a CIDR
// block with no host bits set, a gateway an address inside it, an IP range a block inside it, and a
// new subnet overlaps none the host's networks already use. Errors are plain messages; the
// requests name the field.
import { isIP } from 'node:net';

/** A CIDR block: its family, its first address as a number and its prefix length. */
export interface Block {
  family: 4 | 6;
  base: bigint;
  prefix: number;
}

const BITS = { 4: 32, 6: 128 } as const;

/** An address as a number (the caller checked it with isIP). */
function addressValue(address: string, family: 4 | 6): bigint {
  if (family === 4) return address.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n);
  let text = address;
  // An IPv6 address may end in a dotted IPv4 address (::ffff:10.0.0.1): its two last groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = addressValue(dotted[1]!, 4);
    text = `${text.slice(0, -dotted[1]!.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groups = (s: string) => (s ? s.split(':') : []);
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return all.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** An address and its family, or an error saying what is wrong. */
export function parseAddress(text: string): { family: 4 | 6; value: bigint } {
  const family = isIP(text);
  if (family === 0) throw new Error(`${text} is not an IP address`);
  return { family: family as 4 | 6, value: addressValue(text, family as 4 | 6) };
}

/** A CIDR block (`10.10.0.0/24`, `fd00:1::/64`), or an error saying what is wrong. */
export function parseBlock(text: string): Block {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text);
  if (!m) throw new Error(`${text} is not a CIDR block (an address, a slash and a prefix length: 10.10.0.0/24)`);
  const { family, value } = parseAddress(m[1]!);
  const prefix = Number(m[2]);
  const bits = BITS[family];
  if (prefix > bits) throw new Error(`${text}: an IPv${family} prefix length is at most ${bits}`);
  const hostBits = BigInt(bits - prefix);
  if (value & ((1n << hostBits) - 1n)) throw new Error(`${text} has host bits set: the block starts at ${format(value & ~((1n << hostBits) - 1n), family)}/${prefix}`);
  return { family, base: value, prefix };
}

/** Whether the address is inside the block. */
export function contains(block: Block, address: { family: 4 | 6; value: bigint }): boolean {
  if (block.family !== address.family) return false;
  const shift = BigInt(BITS[block.family] - block.prefix);
  return address.value >> shift === block.base >> shift;
}

/** Whether two blocks share an address. */
export function overlaps(a: Block, b: Block): boolean {
  if (a.family !== b.family) return false;
  return contains(a, { family: b.family, value: b.base }) || contains(b, { family: a.family, value: a.base });
}

/** Whether `inner` lies within `outer`. */
export const within = (inner: Block, outer: Block) => inner.prefix >= outer.prefix && contains(outer, { family: inner.family, value: inner.base });

function format(value: bigint, family: 4 | 6): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map(s => String((value >> s) & 0xffn)).join('.');
  return Array.from({ length: 8 }, (_, i) => ((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');
}
