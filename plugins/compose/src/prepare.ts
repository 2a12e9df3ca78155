// What Berth itself adds to the file it deploys, besides the transforms of the compose-file
// module: its owner labels on every service (so every container, service and task of the stack
// is recognisably the record's), and for stacks an update policy that rolls a failing service
// back unless the file sets its own, and placement by ownership: the constraint that keeps the
// stack's tasks on the nodes its organization may use (node.labels.berth.org.<id>==true) first in
// each service's deploy.placement.constraints, the file's own after it (ANDed: they narrow, never
// widen). The file as the user wrote it is kept; this is the file Berth deploys.
import { isMap, isSeq, type Document } from 'yaml';
import { ORGANIZATION_LABEL, withOrganizationConstraint } from '@berth/plugin-workloads';
import { parseCompose, type ComposeType } from './file/index.ts';

/** Adds `labels` to a service's labels mapping (or list), replacing same-named ones. */
function addLabels(doc: Document, at: (string | number)[], labels: Record<string, string>): void {
  const node = doc.getIn(at);
  if (isSeq(node)) {
    for (const [k, v] of Object.entries(labels)) {
      node.items = node.items.filter(i => !String((i as { value?: unknown }).value ?? i).startsWith(`${k}=`));
      node.add(`${k}=${v}`);
    }
  } else if (isMap(node)) {
    for (const [k, v] of Object.entries(labels)) node.set(k, v);
  } else {
    doc.setIn(at, doc.createNode(labels));
  }
}

/** The organization's constraint first, then the file's own (a list; anything else there is replaced, as Compose refuses it). */
function withPlacement(doc: Document, at: (string | number)[], organizationId: string): void {
  const node = doc.getIn(at);
  const own = isSeq(node) ? node.items.map(i => String((i as { value?: unknown }).value ?? i)) : [];
  doc.setIn(at, doc.createNode(withOrganizationConstraint(organizationId, own)));
}

/** The file as Berth deploys it: owner labels on every service (and, for stacks, their deploy labels and a rollback policy). */
export function withOwnership(text: string, type: ComposeType, labels: Record<string, string>): string {
  const doc = parseCompose(text);
  const services = doc.get('services');
  if (!isMap(services)) return doc.toString();
  for (const item of services.items) {
    const name = String((item.key as { value?: unknown }).value ?? item.key);
    if (!isMap(item.value)) continue;
    addLabels(doc, ['services', name, 'labels'], labels);
    if (type === 'stack') {
      addLabels(doc, ['services', name, 'deploy', 'labels'], labels);
      if (labels[ORGANIZATION_LABEL]) withPlacement(doc, ['services', name, 'deploy', 'placement', 'constraints'], labels[ORGANIZATION_LABEL]);
      if (!doc.hasIn(['services', name, 'deploy', 'update_config', 'failure_action'])) {
        doc.setIn(['services', name, 'deploy', 'update_config', 'failure_action'], 'rollback');
      }
    }
  }
  return doc.toString();
}
