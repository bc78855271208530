// Fixture data for component tests, in the shapes the views take.
import type { JobDetail } from '../pages/job/JobDetailView';
import type { JobRow } from '../pages/jobs/JobsTable';
import type { ClusterFieldsFragment, QueueFieldsFragment, ServiceSummaryFieldsFragment, UsageQuery } from '../gql/graphql';
import type { ServiceDetail } from '../pages/services/ServiceView';

export const jobRows: JobRow[] = [
  {
    id: '1',
    name: 'train-llama',
    state: 'RUNNING',
    queue: 'default',
    priorityClass: 'high',
    priority: 1000,
    preemptible: false,
    borrowed: false,
    submittedBy: '7',
    submittedAt: '2026-11-20T10:00:00Z',
    updatedAt: '2026-11-20T10:05:00Z',
    clusterId: 'east-1',
    tasks: 1,
    replicas: 4,
  },
  {
    id: '2',
    name: 'eval-sweep',
    state: 'PENDING',
    queue: 'batch',
    priorityClass: 'low',
    priority: 0,
    preemptible: true,
    borrowed: false,
    submittedBy: '8',
    submittedAt: '2026-11-21T09:00:00Z',
    updatedAt: '2026-11-21T09:00:00Z',
    clusterId: null,
    tasks: 2,
    replicas: 3,
  },
];

export const jobDetail: JobDetail = {
  __typename: 'Job',
  id: '1',
  projectId: '3',
  queueId: '4',
  name: 'train-llama',
  priority: 1000,
  priorityClass: 'high',
  preemptible: false,
  state: 'RUNNING',
  borrowed: true,
  submittedBy: '7',
  submitter: { __typename: 'User', id: '7', subject: 'alice', displayName: 'Alice' },
  submittedAt: '2026-11-20T10:00:00Z',
  updatedAt: '2026-11-20T10:05:00Z',
  clusterId: 'east-1',
  epoch: 2,
  workloadType: 'BATCH',
  queuePosition: null,
  estimatedStart: null,
  predictedRuntime: null,
  projectSlug: 'vision',
  queueName: 'default',
  workspace: null,
  spec: { name: 'train-llama', project: 'vision', tasks: [{ name: 'main', replicas: 2, image: 'busybox' }] },
  whyPending: null,
  utilization: {
    __typename: 'JobUtilization',
    samples: 12,
    avgBusyPct: 71.5,
    maxBusyPct: 98,
    lastBusyPct: 64,
    avgMemoryUsedMib: 30000,
    maxMemoryUsedMib: 40960,
    updatedAt: '2026-11-20T10:05:00Z',
    usageSamples: 12,
    avgCpuCores: 7.25,
    maxCpuCores: 9.5,
    avgMemoryMib: 50000,
    maxMemoryMib: 65536,
  },
  dispatches: [
    {
      __typename: 'Dispatch',
      id: '11',
      epoch: 1,
      clusterId: 'west-1',
      dispatchedAt: '2026-11-20T10:00:01Z',
      acknowledgedAt: null,
      outcome: 'rejected',
      reason: 'no node has 2 free H100-80GB',
    },
    {
      __typename: 'Dispatch',
      id: '12',
      epoch: 2,
      clusterId: 'east-1',
      dispatchedAt: '2026-11-20T10:00:05Z',
      acknowledgedAt: '2026-11-20T10:00:06Z',
      outcome: 'acknowledged',
      reason: null,
    },
  ],
  tasks: [{ __typename: 'Task', id: '10', name: 'main', replicaCount: 2, state: 'running', spec: {} }],
  replicas: [
    {
      __typename: 'Replica',
      id: '100',
      taskId: '10',
      index: 0,
      state: 'running',
      node: 'gpu-node-a',
      devices: [{ index: 0 }, { index: 1 }],
      clusterId: 'east-1',
      epoch: 2,
      updatedAt: '2026-11-20T10:05:00Z',
      exitCode: null,
      termination: null,
      usage: {
        __typename: 'ReplicaUsage',
        cpuCores: 3.5,
        memoryMib: 24576,
        diskReadBps: 120_000_000,
        diskWriteBps: 0,
        netRxBps: 2_500_000,
        netTxBps: 900,
        at: '2026-11-20T10:05:00Z',
      },
    },
    {
      __typename: 'Replica',
      id: '101',
      taskId: '10',
      index: 1,
      state: 'placed',
      node: 'gpu-node-b',
      devices: [{ uuid: 'GPU-abc', milli: 250 }],
      clusterId: 'east-1',
      epoch: 2,
      updatedAt: '2026-11-20T10:05:00Z',
      exitCode: null,
      termination: null,
      usage: null,
    },
  ],
  events: [
    {
      __typename: 'JobEvent',
      id: 'e1',
      taskId: null,
      replicaId: null,
      fromState: null,
      toState: 'pending',
      cause: 'submitted',
      actor: 'dev:alice',
      at: '2026-11-20T10:00:00Z',
      clusterId: null,
      epoch: null,
    },
    {
      __typename: 'JobEvent',
      id: 'e2',
      taskId: null,
      replicaId: null,
      fromState: 'pending',
      toState: 'admitted',
      cause: 'within guarantee',
      actor: 'admission',
      at: '2026-11-20T10:00:01Z',
      clusterId: null,
      epoch: null,
    },
  ],
};

export const queue: QueueFieldsFragment = {
  __typename: 'Queue',
  id: '4',
  name: 'default',
  weight: 2,
  canBorrow: true,
  maxWaitSeconds: 7200,
  defaultRuntimeSeconds: null,
  maxRuntimeSeconds: 86400,
  suspendBorrowedDuring: '09:00-18:00',
  interactiveReserveGpus: 0,
  fairShare: { __typename: 'QueueFairShare', fairGpus: 12, heldGpus: 10 },
  poolWeights: [],
  quotas: [
    { __typename: 'Quota', resource: 'gpu', guaranteed: 8000, limit: 16000 },
    { __typename: 'Quota', resource: 'cpu_milli', guaranteed: 64000, limit: null },
  ],
  usage: [
    { __typename: 'ResourceAmount', resource: 'gpu', amount: 10000 },
    { __typename: 'ResourceAmount', resource: 'memory_mib', amount: 2048 },
  ],
};

const gpu = (index: number, model: string, allocatedMilli: number, busyPct: number | null, healthy = true) => ({
  __typename: 'Gpu' as const,
  index,
  model,
  memoryMib: 81920,
  healthy,
  allocatedMilli,
  busyPct,
  memoryUsedMib: busyPct == null ? null : 1024,
  metricsAt: busyPct == null ? null : '2026-11-22T03:00:00Z',
});

export const clusters: ClusterFieldsFragment[] = [
  {
    __typename: 'Cluster',
    id: 'east-1',
    displayName: 'East 1',
    health: 'healthy',
    cordoned: false,
    lastHeartbeat: '2026-11-22T03:00:00Z',
    capacityAt: '2026-11-22T03:00:00Z',
    agentVersion: '0.1.0',
    controlPlaneMismatch: false,
    capacity: [
      { __typename: 'ModelCapacityObj', model: 'H100-80GB', totalGpus: 2, freeWholeGpus: 0 },
      { __typename: 'ModelCapacityObj', model: 'A100-80GB', totalGpus: 1, freeWholeGpus: 1 },
    ],
    pools: [
      { __typename: 'NodePool', name: 'train', nodes: 1, totalGpus: 2, freeWholeGpus: 0 },
      { __typename: 'NodePool', name: 'default', nodes: 1, totalGpus: 1, freeWholeGpus: 1 },
    ],
    nodes: [
      {
        __typename: 'ClusterNode',
        name: 'gpu-node-a',
        healthy: true,
        rack: 'r1',
        pool: 'train',
        gpus: [gpu(0, 'H100-80GB', 1000, 93), gpu(1, 'H100-80GB', 250, 5)],
      },
      { __typename: 'ClusterNode', name: 'gpu-node-b', healthy: false, rack: null, pool: 'default', gpus: [gpu(0, 'A100-80GB', 0, null, false)] },
    ],
  },
  {
    __typename: 'Cluster',
    id: 'west-1',
    displayName: null,
    health: 'degraded',
    cordoned: true,
    lastHeartbeat: '2026-11-22T02:00:00Z',
    capacityAt: null,
    agentVersion: null,
    controlPlaneMismatch: false,
    capacity: [],
    pools: [],
    nodes: [
      { __typename: 'ClusterNode', name: 'w-node-3', healthy: true, rack: null, gpus: [gpu(5, 'T4', 1000, 2), gpu(6, 'T4', 0, 50)] },
    ],
  },
];

type Row = UsageQuery['usage']['rows'][number];
const row = (r: Partial<Row> & Pick<Row, 'gpuHoursValue' | 'effectiveCostValue'>): Row => ({
  __typename: 'UsageRow',
  project: null,
  queue: null,
  cluster: null,
  gpuModel: null,
  user: null,
  day: null,
  gpuHours: r.gpuHoursValue.toFixed(9),
  effectiveCost: r.effectiveCostValue.toFixed(6),
  listCost: (r.effectiveCostValue * 1.25).toFixed(6),
  charges: 1,
  ...r,
});

const report = (rows: Row[]): UsageQuery['usage'] => ({
  __typename: 'UsageReport',
  start: '2026-11-01T00:00:00Z',
  end: '2026-12-01T00:00:00Z',
  asOf: '2026-11-22T03:00:00Z',
  currency: 'USD',
  rows,
});

/** usage(groupBy: [DAY, PROJECT]) */
export const usageByDay = report([
  row({ day: '2026-11-20', project: 'nlp', gpuHoursValue: 5, effectiveCostValue: 10 }),
  row({ day: '2026-11-20', project: 'vision', gpuHoursValue: 10, effectiveCostValue: 30 }),
  row({ day: '2026-11-21', project: 'vision', gpuHoursValue: 2, effectiveCostValue: 6 }),
]);

/** usage(groupBy: [PROJECT]) */
export const usageTotals = report([
  row({ project: 'nlp', gpuHoursValue: 5, effectiveCostValue: 10 }),
  row({ project: 'vision', gpuHoursValue: 12, effectiveCostValue: 36 }),
]);

/** A service as the Services table lists it: request-rate autoscaling, short of a replica. */
export const serviceSummary: ServiceSummaryFieldsFragment = {
  __typename: 'Service',
  id: '21',
  name: 'chat',
  project: 'vision',
  queue: 'default',
  owner: 'dev:alice',
  state: 'PROGRESSING',
  condition: null,
  revision: 2,
  minReplicas: 1,
  maxReplicas: 4,
  desiredReplicas: 3,
  readyReplicas: 2,
  port: 8000,
  readinessPath: '/healthz',
  image: 'ghcr.io/acme/llm-server:1.5',
  autoscaling: { __typename: 'AutoscalingObj', metric: 'REQUEST_RATE', target: 10, scaleDownDelaySeconds: 300 },
  maxSurge: 1,
  maxUnavailable: 0,
  requestsPerSecond: 25,
  loadReportedAt: '2026-11-22T03:00:00Z',
  createdAt: '2026-11-22T01:00:00Z',
  updatedAt: '2026-11-22T03:00:00Z',
};

const replicaJob = (id: string, state: 'RUNNING' | 'PENDING', clusterId: string | null, revision: number) => ({
  __typename: 'Job' as const,
  id,
  name: `chat-${id}`,
  state,
  clusterId,
  spec: { name: 'chat', project: 'vision', service: { name: 'chat', revision, port: 8000 }, tasks: [] },
  submittedAt: '2026-11-22T02:00:00Z',
  updatedAt: '2026-11-22T03:00:00Z',
  utilization: state === 'RUNNING' ? { __typename: 'JobUtilization' as const, lastBusyPct: id === '51' ? 80 : 40 } : null,
});

/** The service page's service: replicas on two clusters and one not placed yet, a scaling history. */
export const serviceDetail: ServiceDetail = {
  ...serviceSummary,
  condition: 'waiting for quota: queue default is at its gpu limit',
  gpuUtilization: { __typename: 'ServiceUtilization', busyPct: 60, replicas: 2 },
  replicas: [replicaJob('51', 'RUNNING', 'east-1', 2), replicaJob('52', 'RUNNING', 'west-1', 1), replicaJob('53', 'PENDING', null, 2)],
  replicasByCluster: [
    { __typename: 'ClusterReplicasObj', clusterId: 'east-1', replicas: 1, ready: 1, endpoint: 'http://chat.grus-vision.svc.cluster.local:8000/' },
    { __typename: 'ClusterReplicasObj', clusterId: 'west-1', replicas: 1, ready: 1, endpoint: null },
    { __typename: 'ClusterReplicasObj', clusterId: null, replicas: 1, ready: 0, endpoint: null },
  ],
  scalingHistory: [
    { __typename: 'ScalingEventObj', at: '2026-11-22T02:30:00Z', fromReplicas: 2, toReplicas: 3, signal: 25, reason: 'request rate above target' },
    { __typename: 'ScalingEventObj', at: '2026-11-22T02:00:00Z', fromReplicas: 1, toReplicas: 2, signal: null, reason: 'scaled by dev:alice' },
  ],
  revisions: [
    { __typename: 'ServiceRevisionObj', revision: 2, createdAt: '2026-11-22T02:10:00Z', image: 'ghcr.io/acme/llm-server:1.5' },
    { __typename: 'ServiceRevisionObj', revision: 1, createdAt: '2026-11-22T01:00:00Z', image: 'ghcr.io/acme/llm-server:1.4' },
  ],
};
