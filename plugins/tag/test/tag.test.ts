// tag.* through the real kernel and a real PostgreSQL database, on both wire forms (REST and tRPC),
// and the tags project.one and project.all answer.
import t from 'tap';
import { startTestServer, signUpAdmin, addMember, otherOrganization, type Client } from '@berth/core/testing';

const issueFields = (body: { issues?: { path: (string | number)[] }[] }) => (body.issues ?? []).map(i => String(i.path[0]));
const TAG_FIELDS = ['color', 'createdAt', 'name', 'organizationId', 'tagId'];
/** The peer's ids: 21 characters of nanoid's alphabet. */
const PEER_ID = /^[A-Za-z0-9_-]{21}$/;

async function must(reply: Promise<{ status: number; body: any }>, what: string) {
  const r = await reply;
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const newProject = async (c: Client, name: string) => (await must(c.post('project.create', { name }), 'project.create')).project.projectId as string;
const newTag = async (c: Client, name: string, color: string | null = '#0ea5e9') => must(c.post('tag.create', { name, color }), 'tag.create');
const tagsOf = async (c: Client, projectId: string) => (await must(c.get('project.one', { projectId }), 'project.one')).projectTags as any[];

t.test('tag operations', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const { client: c, organizationId } = await signUpAdmin(server);

  t.test('create → one → all → update → remove, REST form', async t => {
    const created = await c.post('tag.create', { name: 'backend', color: '#ff0000' });
    t.equal(created.status, 200);
    t.same(Object.keys(created.body).sort(), TAG_FIELDS, "the peer's tag row, nothing more");
    t.match(created.body, { name: 'backend', color: '#ff0000', organizationId, tagId: PEER_ID });
    t.ok(!Number.isNaN(Date.parse(created.body.createdAt)), 'createdAt is an ISO date');
    const { tagId } = created.body;

    t.same((await c.get('tag.one', { tagId })).body, created.body, 'one answers it as created');
    t.ok(
      (await c.get('tag.all')).body.some((x: { tagId: string }) => x.tagId === tagId),
      'all lists it',
    );

    const renamed = await c.post('tag.update', { tagId, name: 'api' });
    t.equal(renamed.status, 200);
    t.same(renamed.body, { ...created.body, name: 'api' }, 'update changes the name only, and answers the tag');
    const recolored = await c.post('tag.update', { tagId, color: null });
    t.same(recolored.body, { ...created.body, name: 'api', color: null }, 'color may be cleared (null)');
    const ignored = await c.post('tag.update', { tagId, createdAt: '2000-01-01T00:00:00.000Z', organizationId: 'somewhere-else' });
    t.equal(ignored.status, 200);
    t.same(ignored.body, recolored.body, "the peer's createdAt and organizationId are accepted and ignored");

    const removed = await c.post('tag.remove', { tagId });
    t.equal(removed.status, 200);
    t.same(removed.body, { success: true }, "remove answers the peer's { success: true }");
    const gone = await c.get('tag.one', { tagId });
    t.equal(gone.status, 404);
    t.equal(gone.body.message, 'Tag not found');
    t.equal((await c.post('tag.remove', { tagId })).status, 404, 'a removed tag cannot be removed again');
    t.equal((await c.post('tag.update', { tagId, name: 'x' })).status, 404);
  });

  t.test('the tRPC form answers the same', async t => {
    const created = await c.trpc('mutation', 'tag.create', { name: 'via trpc' });
    t.equal(created.status, 200);
    const tag = created.body.result.data.json;
    t.match(tag, { name: 'via trpc', color: null, organizationId, tagId: PEER_ID }, 'color is null when not given');
    const one = await c.trpc('query', 'tag.one', { tagId: tag.tagId });
    t.same(one.body.result.data.json, tag);
    const all = await c.trpc('query', 'tag.all');
    t.same(all.body.result.data.json, (await c.get('tag.all')).body, 'all, wrapped');
    const updated = await c.trpc('mutation', 'tag.update', { tagId: tag.tagId, color: '#00ff00' });
    t.same(updated.body.result.data.json, { ...tag, color: '#00ff00' });
    const projectId = await newProject(c, 'trpc project');
    const assigned = await c.trpc('mutation', 'tag.assignToProject', { projectId, tagId: tag.tagId });
    t.match(assigned.body.result.data.json, { projectId, tagId: tag.tagId, id: PEER_ID });
    t.same((await c.trpc('mutation', 'tag.removeFromProject', { projectId, tagId: tag.tagId })).body.result.data.json, { success: true });
    t.same((await c.trpc('mutation', 'tag.bulkAssign', { projectId, tagIds: [tag.tagId] })).body.result.data.json, { success: true });
    t.same(
      (await tagsOf(c, projectId)).map(x => x.tagId),
      [tag.tagId],
    );
    t.same((await c.trpc('mutation', 'tag.remove', { tagId: tag.tagId })).body.result.data.json, { success: true });
    const missing = await c.trpc('query', 'tag.one', { tagId: tag.tagId });
    t.equal(missing.status, 404);
    t.equal(missing.body.error.json.message, 'Tag not found', "the tRPC error carries the peer's message");
  });

  t.test('a name is the organization’s once', async t => {
    const first = await newTag(c, 'unique-name');
    const again = await c.post('tag.create', { name: 'unique-name', color: '#000000' });
    t.equal(again.status, 409);
    t.equal(again.body.message, 'A tag with this name already exists in your organization', "the peer's message");
    const other = await newTag(c, 'another-name');
    const clash = await c.post('tag.update', { tagId: other.tagId, name: 'unique-name' });
    t.equal(clash.status, 409, 'an update to a name taken is refused too');
    t.equal((await c.get('tag.one', { tagId: other.tagId })).body.name, 'another-name', 'and changes nothing');
    const same = await c.post('tag.update', { tagId: first.tagId, name: 'unique-name', color: '#111111' });
    t.equal(same.status, 200, "a tag's own name is no clash");
  });

  t.test('all lists the organization’s tags by name', async t => {
    for (const name of ['zeta', 'alpha', 'mid']) await newTag(c, `order-${name}`);
    const names = ((await c.get('tag.all')).body as { name: string }[]).map(x => x.name).filter(n => n.startsWith('order-'));
    t.same(names, ['order-alpha', 'order-mid', 'order-zeta'], 'by name, not by when they were made');
  });

  t.test('assign, list on the project, remove from the project', async t => {
    const projectId = await newProject(c, 'tagged');
    const web = await newTag(c, 'web', '#3b82f6');
    const prod = await newTag(c, 'prod', null);
    t.same(await tagsOf(c, projectId), [], 'a new project has no tags');

    const link = await c.post('tag.assignToProject', { projectId, tagId: web.tagId });
    t.equal(link.status, 200);
    t.same(Object.keys(link.body).sort(), ['id', 'projectId', 'tagId'], "the peer's project_tag row");
    t.match(link.body, { id: PEER_ID, projectId, tagId: web.tagId });
    await must(c.post('tag.assignToProject', { projectId, tagId: prod.tagId }), 'assign prod');

    const twice = await c.post('tag.assignToProject', { projectId, tagId: web.tagId });
    t.equal(twice.status, 409);
    t.equal(twice.body.message, 'This tag is already assigned to this project', "the peer's message");

    const expected = [
      { id: String, projectId, tagId: prod.tagId, tag: prod },
      { id: link.body.id, projectId, tagId: web.tagId, tag: web },
    ];
    const one = await tagsOf(c, projectId);
    t.match(one, expected, 'project.one answers the links with their tags, by name');
    t.equal(one.length, 2);
    t.same(Object.keys(one[0]).sort(), ['id', 'projectId', 'tag', 'tagId'], "each the peer's project_tag row with its tag");
    const all = (await c.get('project.all')).body.find((p: { projectId: string }) => p.projectId === projectId);
    t.same(all.projectTags, one, 'project.all answers the same tags');
    const trpcAll = (await c.trpc('query', 'project.all')).body.result.data.json.find((p: { projectId: string }) => p.projectId === projectId);
    t.same(trpcAll.projectTags, one, 'and so does its tRPC form');

    const off = await c.post('tag.removeFromProject', { projectId, tagId: web.tagId });
    t.equal(off.status, 200);
    t.same(off.body, { success: true });
    t.same(
      (await tagsOf(c, projectId)).map(x => x.tagId),
      [prod.tagId],
      'the tag left the project',
    );
    t.equal((await c.get('tag.one', { tagId: web.tagId })).status, 200, 'and is still a tag of the organization');
    const again = await c.post('tag.removeFromProject', { projectId, tagId: web.tagId });
    t.same([again.status, again.body], [200, { success: true }], 'taking off a tag that is not on the project is done too, as with the peer');
  });

  t.test("bulkAssign sets a project's tags to exactly the given ones", async t => {
    const projectId = await newProject(c, 'bulk');
    const [a, b, d] = [await newTag(c, 'bulk-a'), await newTag(c, 'bulk-b'), await newTag(c, 'bulk-d')];
    await must(c.post('tag.assignToProject', { projectId, tagId: a.tagId }), 'assign a');
    const set = await c.post('tag.bulkAssign', { projectId, tagIds: [d.tagId, b.tagId, d.tagId] });
    t.same([set.status, set.body], [200, { success: true }]);
    t.same(
      (await tagsOf(c, projectId)).map(x => x.tag.name),
      ['bulk-b', 'bulk-d'],
      'the given tags, each once; the one not given left',
    );

    const unknown = await c.post('tag.bulkAssign', { projectId, tagIds: [a.tagId, 'no-such-tag-000000000'] });
    t.equal(unknown.status, 404);
    t.equal(unknown.body.message, 'One or more tags not found in your organization', "the peer's message");
    t.same(
      (await tagsOf(c, projectId)).map(x => x.tag.name),
      ['bulk-b', 'bulk-d'],
      'a refused bulkAssign changes nothing',
    );

    t.equal((await c.post('tag.bulkAssign', { projectId, tagIds: [] })).status, 200);
    t.same(await tagsOf(c, projectId), [], 'an empty list takes every tag off');
    t.equal((await c.post('tag.bulkAssign', { projectId: 'no-such-project-00000', tagIds: [] })).body.message, 'Project not found');
  });

  t.test('a removed tag leaves its projects; a removed project takes its links, not the tags', async t => {
    const keep = await newProject(c, 'keeps tags');
    const doomed = await newProject(c, 'doomed');
    const shared = await newTag(c, 'shared');
    const fleeting = await newTag(c, 'fleeting');
    await must(c.post('tag.bulkAssign', { projectId: keep, tagIds: [shared.tagId, fleeting.tagId] }), 'bulk keep');
    await must(c.post('tag.bulkAssign', { projectId: doomed, tagIds: [shared.tagId] }), 'bulk doomed');
    await must(c.post('tag.remove', { tagId: fleeting.tagId }), 'remove fleeting');
    t.same(
      (await tagsOf(c, keep)).map(x => x.tagId),
      [shared.tagId],
      'the removed tag is on no project',
    );
    await must(c.post('project.remove', { projectId: doomed }), 'project.remove');
    t.equal((await c.get('tag.one', { tagId: shared.tagId })).status, 200, "the project's tag stays");
    const rows = await server.kernel.container.cradle.orm.em.fork().execute<{ n: string }[]>('select count(*) as n from project_tags where project_id = ?', [doomed]);
    t.equal(Number(rows[0]!.n), 0, "the removed project's links are gone");
  });

  t.test('bad input is a 400 naming the field', async t => {
    const projectId = await newProject(c, 'bad input');
    const tag = await newTag(c, 'bad-input');
    const cases: [string, string, Record<string, unknown>, string][] = [
      ['tag.create', 'an empty name', { name: '' }, 'name'],
      ['tag.create', 'no name', { color: '#fff' }, 'name'],
      ['tag.create', 'a name longer than 255', { name: 'n'.repeat(256) }, 'name'],
      ['tag.create', 'a color longer than 255', { name: 'long color', color: 'c'.repeat(256) }, 'color'],
      ['tag.create', 'a NUL in the name', { name: 'a\u0000b' }, 'name'],
      ['tag.update', 'no tagId', { name: 'x' }, 'tagId'],
      ['tag.update', 'an empty name', { tagId: tag.tagId, name: '' }, 'name'],
      ['tag.update', 'a name of another type', { tagId: tag.tagId, name: 12 }, 'name'],
      ['tag.update', 'a long organizationId', { tagId: tag.tagId, organizationId: 'o'.repeat(65) }, 'organizationId'],
      ['tag.remove', 'an empty tagId', { tagId: '' }, 'tagId'],
      ['tag.remove', 'a tagId longer than 64', { tagId: 't'.repeat(65) }, 'tagId'],
      ['tag.assignToProject', 'no projectId', { tagId: tag.tagId }, 'projectId'],
      ['tag.assignToProject', 'no tagId', { projectId }, 'tagId'],
      ['tag.removeFromProject', 'a projectId longer than 64', { projectId: 'p'.repeat(65), tagId: tag.tagId }, 'projectId'],
      ['tag.bulkAssign', 'tagIds not a list', { projectId, tagIds: tag.tagId }, 'tagIds'],
      ['tag.bulkAssign', 'an empty id in tagIds', { projectId, tagIds: [''] }, 'tagIds'],
      ['tag.bulkAssign', 'no tagIds', { projectId }, 'tagIds'],
    ];
    for (const [op, what, input, field] of cases) {
      const r = await c.post(op, input);
      t.equal(r.status, 400, `${op}: ${what} is refused`);
      t.ok(issueFields(r.body).includes(field), `${op}: ${what} names ${field} (${JSON.stringify(r.body.issues)})`);
    }
    const query = await c.get('tag.one', { tagId: '' });
    t.equal(query.status, 400, 'tag.one with an empty tagId, in the query string');
    t.same(issueFields(query.body), ['tagId']);
    const trpc = await c.trpc('mutation', 'tag.create', { name: '' });
    t.equal(trpc.status, 400, 'the tRPC form refuses it too');
    t.same(
      trpc.body.error.json.data.issues.map((i: { path: string[] }) => i.path[0]),
      ['name'],
    );
  });

  t.test('members read tags and tag projects; only admins make, change and remove tags', async t => {
    const projectId = await newProject(c, 'members');
    const tag = await newTag(c, 'members-tag');
    const { client: m } = await addMember(server, c, 'member@example.com');
    t.equal((await m.get('tag.all')).status, 200);
    t.equal((await m.get('tag.one', { tagId: tag.tagId })).status, 200);
    t.equal((await m.post('tag.assignToProject', { projectId, tagId: tag.tagId })).status, 200, 'a member tags a project');
    t.equal((await m.post('tag.removeFromProject', { projectId, tagId: tag.tagId })).status, 200);
    t.equal((await m.post('tag.bulkAssign', { projectId, tagIds: [tag.tagId] })).status, 200);
    for (const [op, input] of [
      ['tag.create', { name: 'by a member' }],
      ['tag.update', { tagId: tag.tagId, name: 'renamed by a member' }],
      ['tag.remove', { tagId: tag.tagId }],
    ] as const) {
      t.equal((await m.post(op, input)).status, 403, `${op} is an admin's`);
    }
    t.equal((await c.get('tag.one', { tagId: tag.tagId })).body.name, 'members-tag', 'nothing changed');
  });

  t.test("another organization's tags and projects are not found", async t => {
    const projectA = await newProject(c, 'A project');
    const tagA = await newTag(c, 'A-tag');
    await must(c.post('tag.assignToProject', { projectId: projectA, tagId: tagA.tagId }), 'assign in A');
    const { userId } = await addMember(server, c, 'stranger@example.com');
    const { client: b } = await otherOrganization(server, userId);
    const projectB = await newProject(b, 'B project');
    const tagB = await newTag(b, 'A-tag');
    t.not(tagB.tagId, tagA.tagId, 'a name is unique per organization: B has its own "A-tag"');
    t.same(
      ((await b.get('tag.all')).body as { tagId: string }[]).map(x => x.tagId),
      [tagB.tagId],
      "B's list holds B's tags only",
    );

    const missingTag = 'M'.repeat(tagA.tagId.length);
    const missingProject = 'M'.repeat(projectA.length);
    const calls: [string, 'get' | 'post', (tagId: string, projectId: string) => Record<string, unknown>][] = [
      ['tag.one', 'get', tagId => ({ tagId })],
      ['tag.update', 'post', tagId => ({ tagId, name: 'taken over' })],
      ['tag.remove', 'post', tagId => ({ tagId })],
      ['tag.assignToProject', 'post', tagId => ({ projectId: projectB, tagId })],
      ['tag.removeFromProject', 'post', tagId => ({ projectId: projectB, tagId })],
      ['tag.bulkAssign', 'post', tagId => ({ projectId: projectB, tagIds: [tagId] })],
    ];
    for (const [op, method, input] of calls) {
      const aimed = await b[method](op, input(tagA.tagId, projectB));
      const none = await b[method](op, input(missingTag, projectB));
      t.equal(aimed.status, 404, `${op} with A's tag is not found`);
      t.same(aimed.body, none.body, `${op}: as for a tag that does not exist`);
    }
    for (const op of ['tag.assignToProject', 'tag.removeFromProject']) {
      const aimed = await b.post(op, { projectId: projectA, tagId: tagB.tagId });
      const none = await b.post(op, { projectId: missingProject, tagId: tagB.tagId });
      t.equal(aimed.status, 404, `${op} on A's project is not found`);
      t.equal(aimed.body.message, 'Project not found');
      t.same(aimed.body, none.body, `${op}: as for a project that does not exist`);
    }
    const bulk = await b.post('tag.bulkAssign', { projectId: projectA, tagIds: [] });
    t.equal(bulk.status, 404, "bulkAssign on A's project is not found (and clears nothing)");
    const trpc = await b.trpc('query', 'tag.one', { tagId: tagA.tagId });
    t.equal(trpc.status, 404, 'the tRPC form too');

    t.same(await c.get('tag.one', { tagId: tagA.tagId }).then(r => r.body), tagA, "A's tag is as it was");
    t.same(
      (await tagsOf(c, projectA)).map(x => x.tagId),
      [tagA.tagId],
      "A's project keeps its tag",
    );
    t.same(await tagsOf(b, projectB), [], "B's project got nothing of A's");
  });

  t.test('the OpenAPI document serves the eight operations with their answers', async t => {
    const doc = (await c.get('settings.getOpenApiDocument')).body;
    const ops = Object.keys(doc.paths).filter(p => p.startsWith('/tag.'));
    t.same(ops.sort(), ['/tag.all', '/tag.assignToProject', '/tag.bulkAssign', '/tag.create', '/tag.one', '/tag.remove', '/tag.removeFromProject', '/tag.update']);
    t.ok(doc.paths['/tag.one'].get && doc.paths['/tag.all'].get && doc.paths['/tag.create'].post, 'queries are GET, mutations POST');
    const tagSchema = doc.paths['/tag.one'].get.responses['200'].content['application/json'].schema;
    t.same(Object.keys(tagSchema.properties ?? {}).sort(), TAG_FIELDS, 'tag.one declares the tag');
  });
});

t.test('without the tag plugin, projects answer no tags', async t => {
  const server = await startTestServer({ jobs: false, proxy: 'none', plugins: ['auth', 'user', 'organization', 'project', 'environment', 'workloads'] });
  t.teardown(() => server.destroy());
  const { client: c } = await signUpAdmin(server);
  const projectId = await newProject(c, 'untagged');
  t.same(await tagsOf(c, projectId), []);
  t.equal((await c.post('tag.create', { name: 'x' })).status, 404, 'tag.* is not served');
});
