// parseInput's cleaning and defaults, against TypeBox's own Value.Clean and Value.Default: the
// union order is computed once per schema and the default walk skipped where no field has one,
// with the same results.
import t from 'tap';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { Settings } from 'typebox/system';
import { parseInput } from '../src/validation.ts';

t.test("a union's branches are tried narrowest first, as Value.Clean tries them", async t => {
  const schema = Type.Object({
    u: Type.Union([Type.Object({ a: Type.String() }), Type.Object({ a: Type.String(), b: Type.String() })]),
    n: Type.Optional(Type.Union([Type.Null(), Type.String(), Type.Literal('x')])),
  });
  for (const input of [{ u: { a: 'x', b: 'y' } }, { u: { a: 'x', b: 'y', c: 'z' }, n: 'x', extra: 1 }, { u: { a: 'x' }, n: null }]) {
    const expected = Value.Clean(schema, Value.Clone(input));
    t.same(parseInput(schema, input, false), expected, JSON.stringify(input));
    t.same(parseInput(schema, input, false), expected, 'the second time too (the sorted schema kept)');
  }
  t.same(parseInput(schema, { u: { a: 'x', b: 'y' } }, false), { u: { a: 'x', b: 'y' } }, 'b kept: the wider branch is not taken first');
  t.equal(Settings.Get().unionPrioritySort, true, "TypeBox's setting is left as it was");
  t.throws(() => parseInput(schema, { u: { b: 'y' } }, false), { code: 'BAD_REQUEST' }, 'an input no branch takes is refused');
  t.equal(Settings.Get().unionPrioritySort, true, 'after a refusal too');
});

t.test('defaults are filled where a schema has them, and an input without any is left as sent', async t => {
  const withDefault = Type.Object({ name: Type.String(), port: Type.Integer({ default: 80 }), nested: Type.Optional(Type.Object({ on: Type.Boolean({ default: false }) })) });
  t.same(parseInput(withDefault, { name: 'a', nested: {} }, false), { name: 'a', port: 80, nested: { on: false } }, 'top-level and nested defaults');
  const without = Type.Object({ name: Type.String(), tags: Type.Optional(Type.Array(Type.Union([Type.String(), Type.Null()]))) });
  const input = { name: 'a', tags: ['x', null] };
  t.same(parseInput(without, input, false), Value.Clean(without, Value.Default(without, Value.Clone(input))), 'no default anywhere: as Value.Default then Value.Clean make it');
  t.not(parseInput(without, input, false), input, 'a copy: the input itself is not changed');
});
