// Fixture data for component tests, in the shapes the views take.
import type { JobDetail } from '../pages/job/JobDetailView';
import type { JobRow } from '../pages/jobs/JobsTable';
import type { OverviewData } from '../pages/overview/types';
import type { ClusterInfo } from '../pages/clusters/types';
import type { UsageRow } from '../pages/billing/types';
import type { QueueFieldsFragment } from '../gql/graphql';

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
  submittedAt: '2026-11-20T10:00:00Z',
  updatedAt: '2026-11-20T10:05:00Z',
  clusterId: 'east-1',
  epoch: 2,
  spec: { name: 'train-llama', project: 'vision', tasks: [{ name: 'main', replicas: 2, image: 'busybox' }] },
  whyPending: null,
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
  quotas: [
    { __typename: 'Quota', resource: 'gpu', guaranteed: 8000, limit: 16000 },
    { __typename: 'Quota', resource: 'cpu_milli', guaranteed: 64000, limit: null },
  ],
  usage: [
    { __typename: 'ResourceAmount', resource: 'gpu', amount: 10000 },
    { __typename: 'ResourceAmount', resource: 'memory_mib', amount: 2048 },
  ],
};

export const overview: OverviewData = {
  clusters: [
    { id: 'east-1', name: 'east-1', healthy: true, gpusTotal: 64, gpusAllocated: 48, gpusBusy: 40 },
    { id: 'west-1', name: 'west-1', healthy: false, gpusTotal: 32, gpusAllocated: 8, gpusBusy: 2 },
  ],
  queueDepth: 12,
  jobsByState: [
    { state: 'RUNNING', count: 9 },
    { state: 'PENDING', count: 12 },
    { state: 'SUCCEEDED', count: 40 },
  ],
  idleGpus: [
    { clusterId: 'west-1', node: 'w-node-3', gpu: '5', busyPercent: 2, jobId: '77', jobName: 'notebook-bob', project: 'vision' },
  ],
};

export const clusters: ClusterInfo[] = [
  {
    id: 'east-1',
    name: 'east-1',
    healthy: true,
    lastSeenAt: '2026-11-22T03:00:00Z',
    nodes: [
      {
        name: 'gpu-node-a',
        healthy: true,
        gpus: [
          { index: 0, model: 'H100-80GB', memoryMib: 81920, allocatedMilli: 1000, busyPercent: 93, healthy: true },
          { index: 1, model: 'H100-80GB', memoryMib: 81920, allocatedMilli: 250, busyPercent: 5, healthy: true },
        ],
      },
      {
        name: 'gpu-node-b',
        healthy: false,
        gpus: [{ index: 0, model: 'A100-80GB', memoryMib: 81920, allocatedMilli: 0, busyPercent: null, healthy: false }],
      },
    ],
  },
];

export const usage: UsageRow[] = [
  { periodStart: '2026-11-20', project: 'vision', gpuModel: 'H100-80GB', clusterId: 'east-1', gpuHours: 10, cost: 30, currency: 'USD' },
  { periodStart: '2026-11-20', project: 'nlp', gpuModel: 'A100-80GB', clusterId: 'east-1', gpuHours: 5, cost: 10, currency: 'USD' },
  { periodStart: '2026-11-21', project: 'vision', gpuModel: 'H100-80GB', clusterId: 'west-1', gpuHours: 2, cost: 6, currency: 'USD' },
];
