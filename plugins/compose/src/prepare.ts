// What Berth itself adds to the file it deploys, besides the transforms of the compose-file
// module: its owner labels on every service (so every container, service and task of the stack
// is recognisably the record's), and for stacks an update policy that rolls a failing service
// back unless the file sets its own.
import { isMap, isSeq, type Document } from 'yaml';
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
      if (!doc.hasIn(['services', name, 'deploy', 'update_config', 'failure_action'])) {
        doc.setIn(['services', name, 'deploy', 'update_config', 'failure_action'], 'rollback');
      }
    }
  }
  return doc.toString();
}
