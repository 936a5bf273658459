// A scheduler on the official JavaScript Kubernetes client (@kubernetes/client-node): informers on nodes and
// pods (list, then watch from the list's resourceVersion, relist when the watch ends), as client-go's reflectors
// do. Pending pods naming this scheduler are bound in arrival order to the node with the most free cpu (ties: the
// first node in numeric name order); a pod that fits nowhere is reported once with PodScheduled=False.
// Usage: node kube_scheduler.mjs KUBECONFIG [SCHEDULER_NAME]
import * as k8s from '@kubernetes/client-node';

const [kubeconfig, schedulerName = 'default-scheduler'] = process.argv.slice(2);
const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const strategicMerge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.StrategicMergePatch);

const milli = (q) => (q === undefined ? 0 : q.endsWith('m') ? parseInt(q, 10) : Math.round(parseFloat(q) * 1000));
const key = (pod) => `${pod.metadata.namespace}/${pod.metadata.name}`;
const cpuOf = (pod) => pod.spec.containers.reduce((sum, c) => sum + milli(c.resources?.requests?.cpu), 0);
const finished = (pod) => ['Succeeded', 'Failed'].includes(pod.status?.phase);

const nodes = new Map();     // name -> {cpu, used}
const placed = new Map();    // pod key -> {node, cpu}: pods holding cpu on a node
const waiting = new Map();   // pod key -> {pod, cpu, reported}, in arrival order
const gone = new Set();      // pods finished or deleted: a late answer must not place them again
let busy = false;
let again = false;

function use(name, cpu) {
  const node = nodes.get(name);
  if (node) node.used += cpu;
}
function place(k, node, cpu) {
  if (!placed.has(k) && !gone.has(k)) {
    placed.set(k, { node, cpu });
    use(node, cpu);
  }
}
function forget(k) {
  gone.add(k);
  waiting.delete(k);
  const p = placed.get(k);
  if (p) {
    placed.delete(k);
    use(p.node, -p.cpu);
  }
}
function observe(pod) {
  const k = key(pod);
  if (finished(pod)) forget(k);
  else if (pod.spec.nodeName) {
    waiting.delete(k);
    place(k, pod.spec.nodeName, cpuOf(pod));
  } else if (pod.spec.schedulerName === schedulerName && !waiting.has(k) && !placed.has(k)) {
    waiting.set(k, { pod, cpu: cpuOf(pod), reported: false });
  }
}

function best(cpu) {
  let chosen = null;
  for (const [name, node] of [...nodes].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))) {
    const free = node.cpu - node.used;
    if (free >= cpu && (chosen === null || free > chosen.free)) chosen = { name, free };
  }
  return chosen?.name;
}

async function schedule() {
  if (busy) {
    again = true;
    return;
  }
  busy = true;
  try {
    do {
      again = false;
      for (const [k, w] of [...waiting]) {
        if (!waiting.has(k)) continue;
        const { name, namespace } = w.pod.metadata;
        const node = best(w.cpu);
        if (node !== undefined) {
          await core.createNamespacedPodBinding({ name, namespace,
            body: { metadata: { name }, target: { kind: 'Node', name: node } } });
          waiting.delete(k);
          place(k, node, w.cpu);
        } else if (!w.reported) {
          w.reported = true;
          const condition = { type: 'PodScheduled', status: 'False', reason: 'Unschedulable',
            message: `0/${nodes.size} nodes are available` };
          await core.patchNamespacedPodStatus({ name, namespace, body: { status: { conditions: [condition] } } },
            strategicMerge);
        }
      }
    } while (again);
  } finally {
    busy = false;
  }
}

const fail = (error) => {
  console.error(error);
  process.exit(1);
};
const nodeInformer = k8s.makeInformer(kc, '/api/v1/nodes', () => core.listNode());
nodeInformer.on('add', (node) => {
  nodes.set(node.metadata.name, { cpu: milli(node.status.allocatable.cpu), used: 0 });
  for (const p of placed.values()) if (p.node === node.metadata.name) use(p.node, p.cpu);
  schedule().catch(fail);
});
const podInformer = k8s.makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
for (const verb of ['add', 'update']) {
  podInformer.on(verb, (pod) => {
    observe(pod);
    schedule().catch(fail);
  });
}
podInformer.on('delete', (pod) => {
  forget(key(pod));
  schedule().catch(fail);
});
for (const informer of [nodeInformer, podInformer]) informer.on('error', fail);
await nodeInformer.start();
await podInformer.start();
console.error('scheduling');
