// The shape of a response, as the shape reference and the shape test see it: field names,
// JSON types and nullability — nothing else (no formats, bounds or enum values).

/** One node of a response shape. `opt`: the field may be absent; `null`: it may be null. */
export interface Shape {
  t: 'string' | 'number' | 'boolean' | 'object' | 'array' | 'any';
  null?: true;
  opt?: true;
  /** object: its fields (absent = an open record whose fields are not known) */
  fields?: Record<string, Shape>;
  /** array: its items */
  items?: Shape;
}

/** Where an operation's reference came from. */
export type ShapeSource = 'router+schema' | 'sdk';

/** The reference: per operation (`router.procedure`) the shape of its 200 answer. */
export interface ShapeReference {
  $generated: string;
  peer: string;
  sdk: string;
  operations: Record<string, { source: ShapeSource; shape: Shape }>;
  /** operations of the peer with no known answer shape in either reference */
  unknown: string[];
}
