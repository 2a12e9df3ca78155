// Every procedure the peer's clients can call (issue 49): the peer's own OpenAPI document
// (../shared/reference/peer-openapi.json, its routers at v0.30.x) lists them, and each one is
// either served by Berth with every plugin enabled, or listed below with the open issue that takes
// it and why. The list only shrinks: a listed procedure that is served fails the test (take it out),
// and so does one that is neither served nor listed.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { startTestServer } from '@berth/core/testing';
import { peerDocumentPath } from '../scripts/empty-string-fields.ts';

/** The governance issue's routers still to come (roles, SSO, SCIM, audit log, forward auth) and its permission procedures. */
const GOVERNANCE = 'issue 50 (governance: roles, permissions, SSO, SCIM, audit log, forward auth, no licence)';
const GOVERNANCE_ROUTERS: string[] = [];
const GOVERNANCE_PROCEDURES: string[] = [];
/** This procedures not served yet, each with what it waits for. */
const PENDING: Record<string, string> = {};

/** Why a procedure the peer serves is not served here, or undefined when nothing says so. */
function pendingReason(name: string): string | undefined {
  const router = name.split('.')[0]!;
  if (GOVERNANCE_ROUTERS.includes(router) || GOVERNANCE_PROCEDURES.includes(name)) return GOVERNANCE;
  return PENDING[name];
}

t.test("every procedure of the peer's document is served, or listed with the issue that takes it", async t => {
  // The shared reference beside the checkout (or BERTH_PEER_OPENAPI), found as the empty-string rule's test finds it.
  const source = peerDocumentPath();
  if (!source) {
    t.fail("the peer's OpenAPI document (peer-openapi.json) was not found: set BERTH_PEER_OPENAPI to its path");
    return;
  }
  const peer = JSON.parse(readFileSync(source, 'utf8')) as { paths: Record<string, unknown> };
  const server = await startTestServer({ jobs: false, proxy: 'none' });
  t.teardown(() => server.destroy());
  const served = new Set(server.kernel.container.cradle.registry.all().map(p => p.path));
  const procedures = Object.keys(peer.paths).map(p => p.replace(/^\//, ''));
  t.ok(procedures.length > 500, `the peer's document lists its procedures (${procedures.length})`);
  const missing = procedures.filter(p => !served.has(p));
  t.same(
    missing.filter(p => !pendingReason(p)),
    [],
    'no procedure is neither served nor listed',
  );
  t.same(
    procedures.filter(p => served.has(p) && pendingReason(p)),
    [],
    'no listed procedure is served (take it out of the list)',
  );
  t.same(
    Object.keys(PENDING).filter(p => !procedures.includes(p)),
    [],
    "every listed procedure is the peer's",
  );
  t.comment(
    `served ${procedures.length - missing.length} of ${procedures.length}; governance ${missing.filter(p => pendingReason(p) === GOVERNANCE).length}, pending ${missing.filter(p => PENDING[p]).length}`,
  );
});
