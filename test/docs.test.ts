// The README points to documents (issue #27): it stays short, every relative link and `#anchor` of
// README.md and docs/*.md resolves, and every page of docs/ is reachable from the README. No server.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { anchors, brokenLinks, slug } from './doc-links.ts';
import { repoRoot } from './helpers.ts';

const README_MAX_LINES = 200;
const docs = readdirSync(path.join(repoRoot, 'docs'))
  .filter(f => f.endsWith('.md'))
  .sort()
  .map(f => `docs/${f}`);
const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');

t.test(`README.md is at most ${README_MAX_LINES} lines`, async t => {
  const lines = readme.split('\n').length - (readme.endsWith('\n') ? 1 : 0);
  t.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines (at most ${README_MAX_LINES}: the rest belongs in docs/)`);
});

t.test('every relative link and #anchor of README.md and docs/*.md resolves', async t => {
  t.ok(docs.length >= 20, `docs/ holds the pages (${docs.length})`);
  const broken = brokenLinks(repoRoot, ['README.md', ...docs]);
  t.same(
    broken.map(b => `${b.file}:${b.line}: ${b.target} (${b.reason})`),
    [],
    'no broken link',
  );
});

t.test('every page of docs/ is linked from the README', async t => {
  for (const page of docs) t.match(readme, `](${page}`, `${page} is linked from the README`);
});

t.test("GitHub's anchors: punctuation stripped, spaces to -, inline markup dropped, repeats numbered", async t => {
  t.equal(slug("Host access is the operator's to grant"), 'host-access-is-the-operators-to-grant');
  t.equal(slug('Remote hosts over SSH (groundwork)'), 'remote-hosts-over-ssh-groundwork');
  t.equal(slug('The `notification_deliveries` table — and [a link](x.md)'), 'the-notification_deliveries-table--and-a-link');
  t.same([...anchors('# A\n\n```sh\n# not a heading\n```\n\n## A\n## A\n')], ['a', 'a-1', 'a-2']);
});

t.test('the check fails on a broken link: a fixture with one of each kind', async t => {
  const root = path.join(repoRoot, 'test/fixtures/doc-links');
  const broken = brokenLinks(root, ['README.md', 'docs/page.md']);
  t.same(
    broken.map(b => `${b.file}:${b.line} ${b.target}`),
    ['README.md:6 docs/missing.md', 'README.md:6 docs/page.md#not-there', 'README.md:7 #nowhere', 'README.md:7 #notes-2', 'docs/page.md:5 ../README.md#a-comment-not-a-heading'],
    'exactly the broken ones, by file and line; the good ones, inline code and code blocks pass',
  );
  t.match(broken[0]!.reason, /no file docs\/missing\.md/);
  t.match(broken[1]!.reason, /no heading #not-there in docs\/page\.md/);
});
