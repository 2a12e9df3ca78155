// What an update takes from its input: a field the input leaves out keeps its stored value.

/** The fields among `keys` that the input gives (not undefined: null is given). */
export function givenFields<T extends object, K extends keyof T>(input: T, keys: readonly K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(keys.filter(k => input[k] !== undefined).map(k => [k, input[k]])) as Partial<Pick<T, K>>;
}
