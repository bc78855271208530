/* eslint-disable */
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
export type Maybe<T> = T | null;
export type InputMaybe<T> = Maybe<T>;
export type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
export type MakeOptional<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]?: Maybe<T[SubKey]> };
export type MakeMaybe<T, K extends keyof T> = Omit<T, K> & { [SubKey in K]: Maybe<T[SubKey]> };
export type MakeEmpty<T extends { [key: string]: unknown }, K extends keyof T> = { [_ in K]?: never };
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
/** All built-in and custom scalars, mapped to their actual values */
export type Scalars = {
  ID: { input: string; output: string; }
  String: { input: string; output: string; }
  Boolean: { input: boolean; output: boolean; }
  Int: { input: number; output: number; }
  Float: { input: number; output: number; }
  /**
   * Implement the DateTime<Utc> scalar
   *
   * The input/output is a string in RFC3339 format.
   */
  DateTime: { input: string; output: string; }
  /** A scalar that can represent any JSON value. */
  JSON: { input: unknown; output: unknown; }
};

/** Result of `registerCluster` and `rotateAgentToken`: the token is shown only here. */
export type AgentTokenPayload = {
  __typename?: 'AgentTokenPayload';
  /** The agent's registration token. Stored hashed: it cannot be shown again. */
  agentToken: Scalars['String']['output'];
  cluster: Cluster;
  /**
   * Installs (or upgrades) the grus-agent chart on the cluster: its id and the Redis the
   * agents reach (`--agent-redis-url`). Add the cluster's Redis ACL credentials with
   * `--set redis.existingSecret=<secret>` (keys `username`, `password`) when Redis needs them.
   */
  helmInstallCommand: Scalars['String']['output'];
};

/** A personal API token, without its secret. */
export type ApiToken = {
  __typename?: 'ApiToken';
  createdAt: Scalars['DateTime']['output'];
  expiresAt?: Maybe<Scalars['DateTime']['output']>;
  id: Scalars['ID']['output'];
  lastUsedAt?: Maybe<Scalars['DateTime']['output']>;
  name: Scalars['String']['output'];
  /** The secret's first characters. */
  prefix: Scalars['String']['output'];
  revokedAt?: Maybe<Scalars['DateTime']['output']>;
  /** What the token may do (a token made before scopes existed may do both). */
  scopes: Array<TokenScope>;
};

export type ApplyServicePayload = {
  __typename?: 'ApplyServicePayload';
  applied: ServiceApplied;
  service: Service;
};

/** One operation recorded in the audit log. */
export type AuditEvent = {
  __typename?: 'AuditEvent';
  /**
   * What was done: `cluster_cordon`, `cluster_drain`, `cluster_uncordon`, `cluster_retire`,
   * `node_cordon`, `node_drain`, `node_uncordon`, `agent_token_rotate`, `queue_delete`,
   * `project_delete`, `budget_set`, `budget_remove`.
   */
  action: Scalars['String']['output'];
  /** Who did it (the user's identity, `dev:alice` or the OIDC subject). */
  actor: Scalars['String']['output'];
  at: Scalars['DateTime']['output'];
  detail: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  /**
   * To what: `cluster/<id>`, `node/<cluster>/<node>`, `project/<slug>`,
   * `queue/<project>/<name>`, `tenant/<slug>`.
   */
  target: Scalars['String']['output'];
};

/** Autoscaling on a measured signal. */
export type AutoscalingInput = {
  metric: ScalingMetric;
  /** A lower count is taken only after it has been asked for this long (humantime; default 5m). */
  scaleDownDelay?: Scalars['String']['input'];
  /** Per replica: a GPU busy percentage (1-100) or requests per second. */
  target: Scalars['Float']['input'];
};

/** Its autoscaling rule. */
export type AutoscalingObj = {
  __typename?: 'AutoscalingObj';
  metric: ScalingMetric;
  scaleDownDelaySeconds: Scalars['Int']['output'];
  target: Scalars['Float']['output'];
};

/**
 * A project's or tenant's budget for the current calendar month (UTC) and its spending.
 * Amounts are decimal strings in the unit (`*Value`: the same as numbers, for charts).
 */
export type Budget = {
  __typename?: 'Budget';
  amount: Scalars['String']['output'];
  amountValue: Scalars['Float']['output'];
  /** Cumulative spending at each day's end, from the first of the month to today. */
  burnDown: Array<BudgetDay>;
  /**
   * What running work is expected to cost until it ends (within the month): until its
   * predicted run time (p90 of like jobs, while still ahead), never past its maximum runtime;
   * nothing for work of unknown end.
   */
  committed: Scalars['String']['output'];
  committedValue: Scalars['Float']['output'];
  /** Whether reaching the amount refuses new jobs (BUDGET_EXCEEDED). */
  hard: Scalars['Boolean']['output'];
  periodEnd: Scalars['DateTime']['output'];
  periodStart: Scalars['DateTime']['output'];
  /** The warning threshold, in percent of the amount. */
  softPercent: Scalars['Int']['output'];
  /** What the month has cost so far. */
  spent: Scalars['String']['output'];
  spentValue: Scalars['Float']['output'];
  status: BudgetStatus;
  /**
   * With `hard`: whether reaching the amount also suspends the scope's borrowed work
   * (resumed once the budget is no longer spent).
   */
  suspendBorrowed: Scalars['Boolean']['output'];
  unit: BudgetUnit;
  /** The book's currency with CURRENCY; `GPU-hours` with GPU_HOURS. */
  unitLabel: Scalars['String']['output'];
  updatedAt: Scalars['DateTime']['output'];
};

/** One day of the burn-down: what the month had cost by that day's end. */
export type BudgetDay = {
  __typename?: 'BudgetDay';
  day: Scalars['DateTime']['output'];
  spent: Scalars['Float']['output'];
};

/** Where spending stands against a budget. */
export type BudgetStatus =
  /** At or past the amount: a hard budget refuses new jobs. */
  | 'EXCEEDED'
  /** Below the soft threshold. */
  | 'UNDER'
  /** At or past the soft threshold: a warning. */
  | 'WARNING';

export type BudgetUnit =
  /** The price book's currency, at contracted prices. */
  | 'CURRENCY'
  /** GPU-hours, whatever their price. */
  | 'GPU_HOURS';

/** How a job checkpoints (`JobInput.checkpoint`) and its last checkpoint. */
export type Checkpoint = {
  __typename?: 'Checkpoint';
  httpPath?: Maybe<Scalars['String']['output']>;
  httpPort?: Maybe<Scalars['Int']['output']>;
  /**
   * The reference of the last checkpoint acknowledged before the job was stopped to make
   * room; a resumed run finds it in `GRUS_CHECKPOINT_REF`.
   */
  lastReference?: Maybe<Scalars['String']['output']>;
};

/**
 * The job checkpoints: before it is stopped to make room (eviction, suspension, shrink) it is
 * asked to write a checkpoint and stopped as soon as every replica acknowledged (within the
 * grace period); the next run gets the checkpoint's reference in `GRUS_CHECKPOINT_REF`.
 * Kubernetes asks by the pod annotation `grus.io/checkpoint-requested` and, with a port and
 * path, a POST to the pod; the workload acknowledges by setting `grus.io/checkpoint`.
 */
export type CheckpointInput = {
  /** Starts with `/`; needs `httpPort`. */
  httpPath?: InputMaybe<Scalars['String']['input']>;
  httpPort?: InputMaybe<Scalars['Int']['input']>;
};

export type Cluster = {
  __typename?: 'Cluster';
  agentCapabilities: Array<Scalars['String']['output']>;
  /**
   * The control plane (incarnation) the agent says it serves, from its heartbeat; null until
   * it has received a command.
   */
  agentControlPlane?: Maybe<Scalars['String']['output']>;
  /** The agent's version and capabilities, from its Hello. */
  agentVersion?: Maybe<Scalars['String']['output']>;
  /** Per GPU model, from the last Capacity summary (empty until one arrived). */
  capacity: Array<ModelCapacityObj>;
  /** When the last Capacity summary was sent. */
  capacityAt?: Maybe<Scalars['DateTime']['output']>;
  /**
   * The agent serves another control plane (this one's database was replaced or restored):
   * it refuses every command from here, and the cluster takes no work (health DEGRADED)
   * until an operator re-pins it (`grus-agent --control-plane`).
   */
  controlPlaneMismatch: Scalars['Boolean']['output'];
  /** Takes no new work (`cordonCluster`, `drainCluster`). */
  cordoned: Scalars['Boolean']['output'];
  createdAt: Scalars['DateTime']['output'];
  displayName?: Maybe<Scalars['String']['output']>;
  /** Cordoned by `drainCluster`: its preemptible work was sent elsewhere. */
  draining: Scalars['Boolean']['output'];
  /**
   * `unknown` (never heard from), `healthy`, `degraded` (heartbeat missing), `unreachable`
   * (silent past the loss timeout).
   */
  health: Scalars['String']['output'];
  id: Scalars['String']['output'];
  labels: Scalars['JSON']['output'];
  lastHeartbeat?: Maybe<Scalars['DateTime']['output']>;
  /**
   * Its GPUs' mean and peak utilization and memory per device over `[since, until)`
   * (default: the hour before `until`, which defaults to now). VALIDATION on `since` when it
   * is not before `until`.
   */
  metricHistory: MetricHistory;
  /** Nodes and their GPUs, from the last Inventory, with allocation and live metrics. */
  nodes: Array<ClusterNode>;
  /** The node pools, from the last Capacity summary (empty when the cluster has none). */
  pools: Array<NodePool>;
  /** When it was retired (`retireCluster`); retired clusters leave `clusters`. */
  retiredAt?: Maybe<Scalars['DateTime']['output']>;
};


export type ClusterMetricHistoryArgs = {
  since?: InputMaybe<Scalars['DateTime']['input']>;
  until?: InputMaybe<Scalars['DateTime']['input']>;
};

export type ClusterNode = {
  __typename?: 'ClusterNode';
  /** Takes no new replicas (`cordonNode`, `drainNode`); what runs there stays. */
  cordoned: Scalars['Boolean']['output'];
  cpuMilli: Scalars['Int']['output'];
  /** Cordoned by `drainNode`: its preemptible work was sent elsewhere. */
  draining: Scalars['Boolean']['output'];
  gpus: Array<Gpu>;
  healthy: Scalars['Boolean']['output'];
  labels: Scalars['JSON']['output'];
  memoryMib: Scalars['Int']['output'];
  name: Scalars['String']['output'];
  /** Its node pool; null when the cluster has none. */
  pool?: Maybe<Scalars['String']['output']>;
  rack?: Maybe<Scalars['String']['output']>;
  updatedAt: Scalars['DateTime']['output'];
};

/** How many live replicas run in one cluster. */
export type ClusterReplicasObj = {
  __typename?: 'ClusterReplicasObj';
  /** The cluster's id; absent: not placed yet. */
  clusterId?: Maybe<Scalars['String']['output']>;
  /** The service's address there, as its running replicas reported it. */
  endpoint?: Maybe<Scalars['String']['output']>;
  ready: Scalars['Int']['output'];
  replicas: Scalars['Int']['output'];
};

/** A cluster's observed state, sent when its capacity, health or cordon changes. */
export type ClusterStatus = {
  __typename?: 'ClusterStatus';
  /** The agent's last capacity summary (grus-protocol CapacitySummary); `null`: none yet. */
  capacity?: Maybe<Scalars['JSON']['output']>;
  cordoned: Scalars['Boolean']['output'];
  displayName?: Maybe<Scalars['String']['output']>;
  /** `unknown`, `healthy`, `degraded` or `unreachable`. */
  health: Scalars['String']['output'];
  id: Scalars['String']['output'];
  lastHeartbeat?: Maybe<Scalars['DateTime']['output']>;
};

/** A new token: the only time its secret is shown. */
export type CreatedApiToken = {
  __typename?: 'CreatedApiToken';
  expiresAt: Scalars['DateTime']['output'];
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  /** Send as `Authorization: Bearer <secret>`. Not retrievable later. */
  secret: Scalars['String']['output'];
  token: ApiToken;
};

/** One dispatch of a job to a cluster (its fencing epoch and how it ended). */
export type Dispatch = {
  __typename?: 'Dispatch';
  acknowledgedAt?: Maybe<Scalars['DateTime']['output']>;
  clusterId: Scalars['String']['output'];
  dispatchedAt: Scalars['DateTime']['output'];
  epoch: Scalars['Int']['output'];
  id: Scalars['ID']['output'];
  /** `pending`, `acknowledged`, `rejected`, `timed_out` or `superseded`. */
  outcome: Scalars['String']['output'];
  reason?: Maybe<Scalars['String']['output']>;
  /** The command reached the cluster's stream (null: not yet confirmed; it is re-sent). */
  sentAt?: Maybe<Scalars['DateTime']['output']>;
};

/** Result of `dryRunJob`. */
export type DryRunResult = {
  __typename?: 'DryRunResult';
  /** Admission would accept the job now. */
  admitted: Scalars['Boolean']['output'];
  /** It would be admitted above the queue's guarantee (preemptible). */
  borrowed: Scalars['Boolean']['output'];
  /** The cluster the allocator would choose now (null when none can take it). */
  cluster?: Maybe<Scalars['String']['output']>;
  /** Set when admission would refuse it. */
  quotaExceeded?: Maybe<QuotaShortfall>;
  /** Set when no cluster can take it: the reason per cluster and stage. */
  whyPending?: Maybe<WhyPending>;
};

export type ElasticInput = {
  max: Scalars['Int']['input'];
  min: Scalars['Int']['input'];
};

export type ExportFormat =
  /** FOCUS 1.2 as CSV (RFC 4180, CRLF), `text/csv`. */
  | 'FOCUS_CSV'
  /** FOCUS 1.2 as JSON Lines, `application/x-ndjson`. */
  | 'FOCUS_JSONL';

export type GangInput = {
  minMembers: Scalars['Int']['input'];
};

export type Gpu = {
  __typename?: 'Gpu';
  /** GPU milli held by placed and running replicas (1000 = the whole device). */
  allocatedMilli: Scalars['Int']['output'];
  /** Latest profiler reading; null until one arrived. */
  busyPct?: Maybe<Scalars['Float']['output']>;
  healthy: Scalars['Boolean']['output'];
  index: Scalars['Int']['output'];
  memoryMib: Scalars['Int']['output'];
  memoryUsedMib?: Maybe<Scalars['Int']['output']>;
  metricsAt?: Maybe<Scalars['DateTime']['output']>;
  model: Scalars['String']['output'];
  powerW?: Maybe<Scalars['Float']['output']>;
  temperatureC?: Maybe<Scalars['Float']['output']>;
  uuid?: Maybe<Scalars['String']['output']>;
};

/** What happens to an idle workspace. */
export type IdleAction =
  /** Cancelled: it ends and gives everything back. */
  | 'STOP'
  /** Suspended: it gives back its GPUs and quota and may be resumed. */
  | 'SUSPEND';

export type Job = Workload & {
  __typename?: 'Job';
  /** Admitted above the queue's guarantee: preemptible by other queues. */
  borrowed: Scalars['Boolean']['output'];
  /**
   * How the job checkpoints and the last checkpoint it wrote before being stopped to make
   * room (the next run resumes from it); `null`: it does not checkpoint.
   */
  checkpoint?: Maybe<Checkpoint>;
  clusterId?: Maybe<Scalars['String']['output']>;
  /** What its GPUs have cost since it was submitted (the `Workload` interface's). */
  cost?: Maybe<WorkloadCost>;
  /** When it was submitted (the `Workload` interface's). */
  createdAt: Scalars['DateTime']['output'];
  /** Every dispatch to a cluster, oldest epoch first. */
  dispatches: Array<Dispatch>;
  /**
   * Where it serves while it runs: a workspace's URL, a service replica's address (in-cluster:
   * its Kubernetes Service's DNS name; in the sim, a made-up `.invalid` one). Null for a batch
   * job, or before it runs.
   */
  endpoint?: Maybe<Scalars['String']['output']>;
  epoch: Scalars['Int']['output'];
  /**
   * When it is expected to start while it waits (see `StartEstimate.at`). Null once it runs,
   * ends or is suspended, or when no estimate can be made: it needs more GPUs than the
   * healthy clusters have, or waits behind work whose end nothing predicts.
   */
  estimatedStart?: Maybe<StartEstimate>;
  /** The append-only event trail, oldest first. */
  events: Array<JobEvent>;
  id: Scalars['ID']['output'];
  /**
   * Its metrics over `[since, until)` (default: the hour before `until`, which defaults to
   * now): its GPUs' utilization and memory, averaged and maxed per interval over the devices
   * its running replicas held, and its replicas' total CPU, memory, disk and network use.
   * VALIDATION on `since` when it is not before `until`.
   */
  metricHistory: MetricHistory;
  name: Scalars['String']['output'];
  /** The submitter's subject (the `Workload` interface's). */
  ownerSubject: Scalars['String']['output'];
  /** Its state as a name (`RUNNING`, ...): the `Workload` interface's phase. */
  phase: Scalars['String']['output'];
  /**
   * How long it is expected to run, from the finished jobs most like it (same name pattern,
   * image, shape, user, project; see `RuntimePrediction.basis`), at most its maximum
   * runtime. Null while nothing like it has finished.
   */
  predictedRuntime?: Maybe<RuntimePrediction>;
  preemptible: Scalars['Boolean']['output'];
  priority: Scalars['Int']['output'];
  priorityClass: Scalars['String']['output'];
  project: Project;
  projectId: Scalars['ID']['output'];
  /** Its project's slug (the `Workload` interface's). */
  projectSlug: Scalars['String']['output'];
  queue: Queue;
  queueId: Scalars['ID']['output'];
  /** Its queue's name (the `Workload` interface's). */
  queueName: Scalars['String']['output'];
  /**
   * Its place in its queue's line while it waits to start (1: next in its queue), in the
   * order the allocator serves a queue: priority, then workspaces, then age. Null once it
   * runs, ends or is suspended.
   */
  queuePosition?: Maybe<Scalars['Int']['output']>;
  replicas: Array<Replica>;
  /** The job as submitted (wire JobSpec, snake_case). */
  spec: Scalars['JSON']['output'];
  state: JobState;
  submittedAt: Scalars['DateTime']['output'];
  submittedBy: Scalars['ID']['output'];
  /** The user who submitted the job. */
  submitter: User;
  tasks: Array<Task>;
  /**
   * The `Workload` interface's timeline: its events as entries, the latest `limit` (default
   * 100, up to 1000), oldest first.
   */
  timeline: Array<WorkloadEvent>;
  updatedAt: Scalars['DateTime']['output'];
  /** GPU utilization from the profiler (null until a Metrics sample covered the job). */
  utilization?: Maybe<JobUtilization>;
  /** Why the job is not yet admitted or placed, per cluster and stage. */
  whyPending?: Maybe<WhyPending>;
  /** What kind of work the job is. */
  workloadType: WorkloadType;
  /** Its workspace settings; `null` for a batch job. */
  workspace?: Maybe<Workspace>;
};


export type JobMetricHistoryArgs = {
  since?: InputMaybe<Scalars['DateTime']['input']>;
  until?: InputMaybe<Scalars['DateTime']['input']>;
};


export type JobTimelineArgs = {
  limit?: Scalars['Int']['input'];
};

export type JobConnection = {
  __typename?: 'JobConnection';
  /** A list of edges. */
  edges: Array<JobEdge>;
  /** A list of nodes. */
  nodes: Array<Job>;
  /** Information to aid in pagination. */
  pageInfo: PageInfo;
};

/** An edge in a connection. */
export type JobEdge = {
  __typename?: 'JobEdge';
  /** A cursor for use in pagination */
  cursor: Scalars['String']['output'];
  /** The item at the end of the edge */
  node: Job;
};

export type JobEvent = {
  __typename?: 'JobEvent';
  actor: Scalars['String']['output'];
  /**
   * Who acted, as people read it: a user's display name (else subject) for `user:<id>`,
   * the actor itself otherwise (`system:allocator`, `agent:<cluster>`).
   */
  actorName: Scalars['String']['output'];
  at: Scalars['DateTime']['output'];
  cause: Scalars['String']['output'];
  clusterId?: Maybe<Scalars['String']['output']>;
  epoch?: Maybe<Scalars['Int']['output']>;
  fromState?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  jobId: Scalars['ID']['output'];
  replicaId?: Maybe<Scalars['ID']['output']>;
  taskId?: Maybe<Scalars['ID']['output']>;
  toState: Scalars['String']['output'];
};

/** Filter of `Project.jobs`. */
export type JobFilterInput = {
  queue?: InputMaybe<Scalars['String']['input']>;
  states?: InputMaybe<Array<JobState>>;
};

export type JobInput = {
  checkpoint?: InputMaybe<CheckpointInput>;
  clusterSelector?: Array<KeyValueInput>;
  elastic?: InputMaybe<ElasticInput>;
  gang?: InputMaybe<GangInput>;
  labels?: Array<KeyValueInput>;
  /** Humantime duration (`90m`, `2h`). */
  maxRuntime?: InputMaybe<Scalars['String']['input']>;
  name: Scalars['String']['input'];
  policies?: Array<PolicyInput>;
  /**
   * Node pools the job may use, in order of preference: its gang goes whole into the first
   * that has room and quota for it. Empty: any node (quota is charged to every pool the
   * queue has a quota for).
   */
  pools?: Array<Scalars['String']['input']>;
  preemptible?: Scalars['Boolean']['input'];
  /** Priority class name: low, normal (default), high, critical. */
  priority?: InputMaybe<Scalars['String']['input']>;
  /** Project slug. */
  project: Scalars['String']['input'];
  /** Queue name; the project's `default` queue when absent. */
  queue?: InputMaybe<Scalars['String']['input']>;
  tasks: Array<TaskInput>;
  /** Makes the job an interactive workspace. */
  workspace?: InputMaybe<WorkspaceInput>;
};

export type JobState =
  | 'ADMITTED'
  | 'CANCELLED'
  | 'DISPATCHED'
  | 'FAILED'
  | 'PENDING'
  | 'PREEMPTED'
  | 'PREEMPTING'
  | 'REJECTED'
  | 'RUNNING'
  | 'SCHEDULED'
  | 'SUCCEEDED'
  /** Suspended by a user: holds no capacity and no quota until it is resumed. */
  | 'SUSPENDED'
  /** Its cluster stopped answering while it ran; it may still be running there. */
  | 'UNKNOWN';

/**
 * A job's GPU utilization over the samples of the devices its running replicas held, and its
 * replicas' CPU and memory over their resource readings.
 */
export type JobUtilization = {
  __typename?: 'JobUtilization';
  avgBusyPct: Scalars['Float']['output'];
  /** Its replicas' total CPU, in cores, mean and peak over the readings (null without one). */
  avgCpuCores?: Maybe<Scalars['Float']['output']>;
  /** Its replicas' total working-set memory, mean and peak (null without a reading). */
  avgMemoryMib?: Maybe<Scalars['Float']['output']>;
  avgMemoryUsedMib: Scalars['Float']['output'];
  /** Mean over the job's devices in the latest Metrics. */
  lastBusyPct?: Maybe<Scalars['Float']['output']>;
  lastMemoryUsedMib?: Maybe<Scalars['Int']['output']>;
  maxBusyPct: Scalars['Float']['output'];
  maxCpuCores?: Maybe<Scalars['Float']['output']>;
  maxMemoryMib?: Maybe<Scalars['Int']['output']>;
  maxMemoryUsedMib: Scalars['Int']['output'];
  samples: Scalars['Int']['output'];
  updatedAt: Scalars['DateTime']['output'];
  /** Resource readings of its replicas (each one their total at one Metrics message). */
  usageSamples: Scalars['Int']['output'];
};

/** Filter of the top-level `jobs`; absent fields do not filter. */
export type JobsFilter = {
  clusterId?: InputMaybe<Scalars['String']['input']>;
  projectId?: InputMaybe<Scalars['ID']['input']>;
  queueId?: InputMaybe<Scalars['ID']['input']>;
  /** Case-insensitive substring of the job name. */
  search?: InputMaybe<Scalars['String']['input']>;
  states?: InputMaybe<Array<JobState>>;
  /** The submitter's user id. */
  userId?: InputMaybe<Scalars['ID']['input']>;
};

export type KeyValueInput = {
  key: Scalars['String']['input'];
  value: Scalars['String']['input'];
};

/** One line a replica wrote. */
export type LogLine = {
  __typename?: 'LogLine';
  at: Scalars['DateTime']['output'];
  stream: LogStream;
  text: Scalars['String']['output'];
};

/** A page of one replica's output, oldest line first. */
export type LogPage = {
  __typename?: 'LogPage';
  /** The cluster the lines came from (`null`: the job was never sent to one). */
  clusterId?: Maybe<Scalars['String']['output']>;
  /** The last line's time: pass it as `since` to read only what follows. */
  cursor?: Maybe<Scalars['DateTime']['output']>;
  /** The replica has ended: no more lines will come. */
  ended: Scalars['Boolean']['output'];
  lines: Array<LogLine>;
  replica: Scalars['Int']['output'];
  source: LogSource;
  task: Scalars['String']['output'];
  /** Older lines matched but were left out (the tail or the byte bound). */
  truncated: Scalars['Boolean']['output'];
};

/** Where a page's lines came from. */
export type LogSource =
  /** Nothing is left of it: not started yet, or gone longer than its agent keeps lines. */
  | 'GONE'
  /** The last lines its agent kept after it was gone. */
  | 'KEPT'
  /** The replica as it runs, or its container still on its node. */
  | 'LIVE';

export type LogStream =
  | 'STDERR'
  | 'STDOUT';

/** A direct member of a project and the role granted there. */
export type Member = {
  __typename?: 'Member';
  role: RoleName;
  user: User;
};

/** Metrics over a range. */
export type MetricHistory = {
  __typename?: 'MetricHistory';
  /** Oldest first; intervals without samples are absent. */
  points: Array<MetricPoint>;
  /**
   * The width of each point: 10 s for ranges within the last day of up to 2,000 points,
   * else 60 s (kept 30 days).
   */
  resolutionSeconds: Scalars['Int']['output'];
};

/**
 * One interval of metrics. GPU fields cover every sample of the devices (a job's: those its
 * running replicas held; a cluster's: all of them) in `[at, at + resolution)` and are null
 * when there was none; resource fields are a job's totals over its replicas, null when there
 * was no reading (and always for a cluster).
 */
export type MetricPoint = {
  __typename?: 'MetricPoint';
  at: Scalars['DateTime']['output'];
  busyPctAvg?: Maybe<Scalars['Float']['output']>;
  busyPctMax?: Maybe<Scalars['Float']['output']>;
  /** CPU in use, in cores. */
  cpuCoresAvg?: Maybe<Scalars['Float']['output']>;
  cpuCoresMax?: Maybe<Scalars['Float']['output']>;
  /** Bytes per second. */
  diskReadBpsAvg?: Maybe<Scalars['Float']['output']>;
  diskWriteBpsAvg?: Maybe<Scalars['Float']['output']>;
  /** Working-set memory. */
  memoryMibAvg?: Maybe<Scalars['Float']['output']>;
  memoryMibMax?: Maybe<Scalars['Int']['output']>;
  /** GPU memory used per device. */
  memoryUsedMibAvg?: Maybe<Scalars['Float']['output']>;
  memoryUsedMibMax?: Maybe<Scalars['Int']['output']>;
  netRxBpsAvg?: Maybe<Scalars['Float']['output']>;
  netTxBpsAvg?: Maybe<Scalars['Float']['output']>;
  /** GPU readings in the interval. */
  samples: Scalars['Int']['output'];
  /** Resource readings in the interval. */
  usageSamples: Scalars['Int']['output'];
};

/** Free capacity of one GPU model, from the agent's last Capacity summary. */
export type ModelCapacityObj = {
  __typename?: 'ModelCapacityObj';
  freeMilliPerDevice: Array<Scalars['Int']['output']>;
  /** Free whole GPUs in the cluster (sum over nodes). */
  freeWholeGpus: Scalars['Int']['output'];
  freeWholePerNode: Array<Scalars['Int']['output']>;
  /** Most whole GPUs one gang can get per topology scope (`node`, `nvlink`, `rack`, `any`). */
  largestGangGpus: Scalars['JSON']['output'];
  model: Scalars['String']['output'];
  totalGpus: Scalars['Int']['output'];
};

export type Mutation = {
  __typename?: 'Mutation';
  /**
   * Project admin. `subject` is the user's identity (`dev:alice`, or the OIDC subject);
   * the user must have signed in once.
   */
  addMember: Scalars['Boolean']['output'];
  /**
   * Member: creates the service, or (its owner or a project admin) updates it. A changed
   * container spec (image, command, env, resources, port, readiness, labels, placement) is a
   * new revision, rolled out within `rollout`'s bounds.
   */
  applyService: ApplyServicePayload;
  /** Member for their own jobs; project admin for any job of the project. */
  cancelJob: Job;
  /** Platform admin. The cluster takes no new work; what runs there stays. Audited. */
  cordonCluster: Cluster;
  /**
   * Platform admin. The node (of the cluster's last inventory) takes no new replicas; what
   * runs there stays. Audited.
   */
  cordonNode: Cluster;
  /** Creates a personal API token for the caller; the secret is in the answer only. */
  createApiToken: CreatedApiToken;
  /** Tenant admin of `tenantId`. Creates the project's `default` queue too. */
  createProject: Project;
  /**
   * Project admin. `maxWaitSeconds`: a waiting job's priority is raised one class after
   * this long, and again after each further period (never to `critical`, nor above its
   * tenant's highest class). `defaultRuntimeSeconds`: the runtime limit of a job that names
   * none; `maxRuntimeSeconds`: no job may ask for more (one that names none gets it).
   * `suspendBorrowedDuring`: a daily window, `HH:MM-HH:MM` UTC, in which the queue's borrowed
   * work is suspended (and resumed after it). `interactiveReserveGpus`: GPUs of the queue's
   * `gpu` guarantee kept for interactive workspaces.
   */
  createQueue: Queue;
  /** Platform admin only. */
  createTenant: Tenant;
  /**
   * Tenant admin of its tenant. Deletes a project none of whose queues ever held a job or
   * service (else CONFLICT), with its queues, members, shares and budget. Audited.
   */
  deleteProject: Project;
  /**
   * Project admin. Deletes a queue that never held a job or service, is not the project's
   * last and is not `default` (else CONFLICT, saying why). Audited.
   */
  deleteQueue: Scalars['Boolean']['output'];
  /** Its owner or a project admin: stops every replica; the name is free again. */
  deleteService: Service;
  /**
   * Platform admin. Cordons the cluster and evicts its preemptible work after
   * `graceSeconds` (0-3600); the work is requeued and goes to other clusters. Work that is
   * not preemptible runs to its end. Until the uncordon, preemptible work placed there
   * later (dispatched before the drain) is evicted the same way. Audited.
   */
  drainCluster: Cluster;
  /**
   * Platform admin. Cordons the node and evicts the preemptible work on it after
   * `graceSeconds` (0-3600); the work is requeued and placed elsewhere. Until the uncordon,
   * preemptible work placed there later (before its agent learnt of the drain) is evicted
   * the same way. Audited.
   */
  drainNode: Cluster;
  /**
   * Member. Validates like submitJob and answers whether admission would accept the job
   * and which cluster the allocator would choose now; stores nothing.
   */
  dryRunJob: DryRunResult;
  /**
   * Exports a closed period as a FOCUS 1.2 file: every tenant (platform admins, without
   * `tenantId`) or one tenant (its tenant admins, or platform admins). The month still
   * running is exported up to a past cut-off (`period: { month, cutoff }`), charges cut
   * there. Exporting the same scope, period (cut-off) and format again returns the stored
   * file, byte for byte; later usage never changes it, and a closed month's file stays.
   */
  exportUsage: UsageExport;
  /** Platform admin only. Registers a cluster and returns its one-time agent token. */
  registerCluster: AgentTokenPayload;
  /**
   * Removes the budget of a project or tenant (who may set it); false when there was none.
   * Audited.
   */
  removeBudget: Scalars['Boolean']['output'];
  /** Project admin. Removes a direct project membership (tenant roles are untouched). */
  removeMember: Scalars['Boolean']['output'];
  /**
   * Member for their own jobs; project admin for any job of the project. A suspended job is
   * admitted again (refused with BUDGET_EXCEEDED while a hard budget of its project or tenant
   * is spent, and with QUOTA_EXCEEDED while its queue's quota cannot take it) and dispatched
   * under a new epoch, to whichever cluster it fits.
   */
  resumeJob: Job;
  /**
   * Platform admin. Retires a cluster that holds no work (else CONFLICT): it leaves
   * `clusters`, takes nothing more, and its agent token stops working. Its history stays.
   * Audited.
   */
  retireCluster: Cluster;
  /**
   * Revokes one of the caller's tokens (revoking twice is fine). Another user's token is
   * NOT_FOUND.
   */
  revokeApiToken: ApiToken;
  /** Platform admin only. Issues a new agent token; the old one stops working. Audited. */
  rotateAgentToken: AgentTokenPayload;
  /**
   * Its owner or a project admin: sets the replica bounds and, optionally, the count to run
   * now (with autoscaling, the rule moves it again within the bounds).
   */
  scaleService: Service;
  /**
   * Sets the monthly budget of a project (tenant admins of its tenant) or of a tenant
   * (platform admins); exactly one of `projectId` and `tenantId`. `amount` is a decimal
   * string in the unit (`"1500"`, `"250.5"`: currency of the price book, or GPU-hours).
   * At `softPercent` of it the budget warns; a `hard` budget refuses new jobs of the scope
   * with BUDGET_EXCEEDED once what the month cost, plus what running work is expected to
   * cost until it ends (its predicted run time, never past its maximum runtime), reaches the
   * amount; with `suspendBorrowed` it also suspends
   * the scope's borrowed work then, and resumes it once the budget is no longer spent.
   * Audited.
   */
  setBudget: Budget;
  /**
   * Member for their own jobs; project admin for any job of the project. `priority` is a
   * class name (low, normal, high, critical); the next allocator round orders by it and the
   * next dispatch carries it. Recorded as an event on the job.
   */
  setJobPriority: Job;
  /**
   * Adds a price (platform admins). Prices are decimal strings (`"2.50"`, at most six
   * decimals); `contractedPricePerGpuHour` defaults to the list price, `currency` to the
   * book's (one currency per book). A price starting after the start of the model's
   * open-ended price closes that one at its start; any other overlap is CONFLICT, and so
   * is a range that reaches into an already exported period.
   */
  setPrice: PriceBookEntry;
  /**
   * Tenant admin of the project's tenant (a project admin may not raise their own project
   * against its siblings). Sets the project's weight among its tenant's projects and, when
   * given, replaces its guarantees and limits (as `setTenantShare`).
   */
  setProjectShare: Project;
  /** Project admin. Changes the role of an existing member. */
  setRole: Scalars['Boolean']['output'];
  /**
   * Its owner or a project admin: the service's current request rate, which a
   * `REQUEST_RATE` autoscaling rule reads (a metrics adapter's report, or a synthetic load
   * in the sim); it stands until set again.
   */
  setServiceLoad: Service;
  /**
   * Platform admin only. Changes what a tenant's members may do to others' work (every
   * project of the tenant inherits it); fields left out stay as they are. `reclaimFrom`
   * limits reclaim to the tenant's own and these tenants' borrowed work; `reclaimFromAny:
   * true` lifts that limit. Jobs already admitted keep their priority.
   */
  setTenantRights: Tenant;
  /**
   * Platform admin only. Sets a tenant's weight among tenants and, when given, replaces its
   * guarantees (an amount of 0 removes a key) and limits (`[]` removes them; a limit of 0
   * admits nothing); fields left out stay as they are. A guarantee above the limit on the
   * same resource is refused.
   */
  setTenantShare: Tenant;
  /** Member. Validates, resolves the priority class, runs admission and stores the job. */
  submitJob: SubmitJobPayload;
  /**
   * Member for their own jobs; project admin for any job of the project. A job no cluster
   * holds is suspended at once; a scheduled or running one is stopped after `graceSeconds`
   * (0-3600, default 30) and then ends `SUSPENDED` instead of being requeued; one on its way
   * to a cluster (`DISPATCHED`) is stopped so once the cluster places it, or suspended at once
   * if the cluster refuses it. A suspended job holds no capacity and no quota and keeps its
   * history.
   */
  suspendJob: Job;
  /** Platform admin. The cluster takes new work again. Audited. */
  uncordonCluster: Cluster;
  /**
   * Platform admin. The node takes new replicas again (a node that was not cordoned is
   * left as it is). Audited.
   */
  uncordonNode: Cluster;
  /**
   * Project admin. Changes a queue's settings: an argument left out keeps its value; `null`
   * clears a duration. The class of service applies to jobs submitted (runtimes) or waiting
   * (aging) from now on. `poolWeights` replaces its weights per node pool (`[]`: its weight
   * everywhere).
   */
  updateQueue: Queue;
  /**
   * Project admin. Sets one quota of a queue (`gpu`, `gpu/<model>`, `pool/<node pool>` in
   * GPU milli; `cpu_milli`; `memory_mib`); `limit: null` lets the queue borrow without bound.
   */
  updateQuota: Queue;
};


export type MutationAddMemberArgs = {
  projectId: Scalars['ID']['input'];
  role: ProjectRole;
  subject: Scalars['String']['input'];
};


export type MutationApplyServiceArgs = {
  input: ServiceInput;
};


export type MutationCancelJobArgs = {
  id: Scalars['ID']['input'];
};


export type MutationCordonClusterArgs = {
  id: Scalars['String']['input'];
};


export type MutationCordonNodeArgs = {
  clusterId: Scalars['String']['input'];
  node: Scalars['String']['input'];
};


export type MutationCreateApiTokenArgs = {
  expiresInDays: Scalars['Int']['input'];
  name: Scalars['String']['input'];
  scopes?: InputMaybe<Array<TokenScope>>;
};


export type MutationCreateProjectArgs = {
  name: Scalars['String']['input'];
  slug: Scalars['String']['input'];
  tenantId: Scalars['ID']['input'];
};


export type MutationCreateQueueArgs = {
  canBorrow?: Scalars['Boolean']['input'];
  defaultRuntimeSeconds?: InputMaybe<Scalars['Int']['input']>;
  interactiveReserveGpus?: Scalars['Float']['input'];
  maxRuntimeSeconds?: InputMaybe<Scalars['Int']['input']>;
  maxWaitSeconds?: InputMaybe<Scalars['Int']['input']>;
  name: Scalars['String']['input'];
  projectId: Scalars['ID']['input'];
  suspendBorrowedDuring?: InputMaybe<Scalars['String']['input']>;
  weight?: Scalars['Float']['input'];
};


export type MutationCreateTenantArgs = {
  name: Scalars['String']['input'];
  slug: Scalars['String']['input'];
};


export type MutationDeleteProjectArgs = {
  projectId: Scalars['ID']['input'];
};


export type MutationDeleteQueueArgs = {
  queueId: Scalars['ID']['input'];
};


export type MutationDeleteServiceArgs = {
  name: Scalars['String']['input'];
  project: Scalars['String']['input'];
};


export type MutationDrainClusterArgs = {
  graceSeconds?: Scalars['Int']['input'];
  id: Scalars['String']['input'];
};


export type MutationDrainNodeArgs = {
  clusterId: Scalars['String']['input'];
  graceSeconds?: Scalars['Int']['input'];
  node: Scalars['String']['input'];
};


export type MutationDryRunJobArgs = {
  input: JobInput;
};


export type MutationExportUsageArgs = {
  format: ExportFormat;
  period: PeriodInput;
  tenantId?: InputMaybe<Scalars['ID']['input']>;
};


export type MutationRegisterClusterArgs = {
  displayName?: InputMaybe<Scalars['String']['input']>;
  id: Scalars['String']['input'];
  labels?: InputMaybe<Scalars['JSON']['input']>;
};


export type MutationRemoveBudgetArgs = {
  projectId?: InputMaybe<Scalars['ID']['input']>;
  tenantId?: InputMaybe<Scalars['ID']['input']>;
};


export type MutationRemoveMemberArgs = {
  projectId: Scalars['ID']['input'];
  userId: Scalars['ID']['input'];
};


export type MutationResumeJobArgs = {
  id: Scalars['ID']['input'];
};


export type MutationRetireClusterArgs = {
  id: Scalars['String']['input'];
};


export type MutationRevokeApiTokenArgs = {
  id: Scalars['ID']['input'];
};


export type MutationRotateAgentTokenArgs = {
  clusterId: Scalars['String']['input'];
};


export type MutationScaleServiceArgs = {
  maxReplicas?: InputMaybe<Scalars['Int']['input']>;
  minReplicas?: InputMaybe<Scalars['Int']['input']>;
  name: Scalars['String']['input'];
  project: Scalars['String']['input'];
  replicas?: InputMaybe<Scalars['Int']['input']>;
};


export type MutationSetBudgetArgs = {
  amount: Scalars['String']['input'];
  hard?: Scalars['Boolean']['input'];
  projectId?: InputMaybe<Scalars['ID']['input']>;
  softPercent?: Scalars['Int']['input'];
  suspendBorrowed?: Scalars['Boolean']['input'];
  tenantId?: InputMaybe<Scalars['ID']['input']>;
  unit: BudgetUnit;
};


export type MutationSetJobPriorityArgs = {
  id: Scalars['ID']['input'];
  priority: Scalars['String']['input'];
};


export type MutationSetPriceArgs = {
  contractedPricePerGpuHour?: InputMaybe<Scalars['String']['input']>;
  currency?: InputMaybe<Scalars['String']['input']>;
  effectiveFrom: Scalars['DateTime']['input'];
  effectiveTo?: InputMaybe<Scalars['DateTime']['input']>;
  gpuModel: Scalars['String']['input'];
  listPricePerGpuHour: Scalars['String']['input'];
};


export type MutationSetProjectShareArgs = {
  guarantees?: InputMaybe<Array<ResourceAmountInput>>;
  limits?: InputMaybe<Array<ResourceAmountInput>>;
  projectId: Scalars['ID']['input'];
  weight?: InputMaybe<Scalars['Float']['input']>;
};


export type MutationSetRoleArgs = {
  projectId: Scalars['ID']['input'];
  role: ProjectRole;
  userId: Scalars['ID']['input'];
};


export type MutationSetServiceLoadArgs = {
  name: Scalars['String']['input'];
  project: Scalars['String']['input'];
  requestsPerSecond: Scalars['Float']['input'];
};


export type MutationSetTenantRightsArgs = {
  maxPriorityClass?: InputMaybe<Scalars['String']['input']>;
  mayPreempt?: InputMaybe<Scalars['Boolean']['input']>;
  reclaimFrom?: InputMaybe<Array<Scalars['ID']['input']>>;
  reclaimFromAny?: InputMaybe<Scalars['Boolean']['input']>;
  tenantId: Scalars['ID']['input'];
};


export type MutationSetTenantShareArgs = {
  guarantees?: InputMaybe<Array<ResourceAmountInput>>;
  limits?: InputMaybe<Array<ResourceAmountInput>>;
  tenantId: Scalars['ID']['input'];
  weight?: InputMaybe<Scalars['Float']['input']>;
};


export type MutationSubmitJobArgs = {
  input: JobInput;
};


export type MutationSuspendJobArgs = {
  graceSeconds?: Scalars['Int']['input'];
  id: Scalars['ID']['input'];
};


export type MutationUncordonClusterArgs = {
  id: Scalars['String']['input'];
};


export type MutationUncordonNodeArgs = {
  clusterId: Scalars['String']['input'];
  node: Scalars['String']['input'];
};


export type MutationUpdateQueueArgs = {
  canBorrow?: InputMaybe<Scalars['Boolean']['input']>;
  defaultRuntimeSeconds?: InputMaybe<Scalars['Int']['input']>;
  interactiveReserveGpus?: InputMaybe<Scalars['Float']['input']>;
  maxRuntimeSeconds?: InputMaybe<Scalars['Int']['input']>;
  maxWaitSeconds?: InputMaybe<Scalars['Int']['input']>;
  poolWeights?: InputMaybe<Array<PoolWeightInput>>;
  queueId: Scalars['ID']['input'];
  suspendBorrowedDuring?: InputMaybe<Scalars['String']['input']>;
  weight?: InputMaybe<Scalars['Float']['input']>;
};


export type MutationUpdateQuotaArgs = {
  guaranteed: Scalars['Int']['input'];
  limit?: InputMaybe<Scalars['Int']['input']>;
  queueId: Scalars['ID']['input'];
  resource: Scalars['String']['input'];
};

/**
 * A node pool of a cluster (the agent's `--node-pool` label selectors), from its last
 * Capacity summary: quotas name it as `pool/<name>`, jobs in `pools`.
 */
export type NodePool = {
  __typename?: 'NodePool';
  /** Per GPU model, the pool's nodes only. */
  capacity: Array<ModelCapacityObj>;
  freeWholeGpus: Scalars['Int']['output'];
  name: Scalars['String']['output'];
  nodes: Scalars['Int']['output'];
  totalGpus: Scalars['Int']['output'];
};

/** Information about pagination in a connection */
export type PageInfo = {
  __typename?: 'PageInfo';
  /** When paginating forwards, the cursor to continue. */
  endCursor?: Maybe<Scalars['String']['output']>;
  /** When paginating forwards, are there more items? */
  hasNextPage: Scalars['Boolean']['output'];
  /** When paginating backwards, are there more items? */
  hasPreviousPage: Scalars['Boolean']['output'];
  /** When paginating backwards, the cursor to continue. */
  startCursor?: Maybe<Scalars['String']['output']>;
};

/** One cluster that was not chosen, and at which stage it was ruled out. */
export type PendingReason = {
  __typename?: 'PendingReason';
  cluster: Scalars['String']['output'];
  reason: Scalars['String']['output'];
  /** `health`, `selector`, `history`, `gpu_model`, `capacity`, `topology` or `reservation`. */
  stage: Scalars['String']['output'];
};

/**
 * A billing period: a calendar month (`month: "2026-11"`), the month up to a cut-off
 * (`month` and `cutoff`: month to date, as cloud providers deliver it daily), or a range
 * (`start`, `end`).
 */
export type PeriodInput = {
  /**
   * With `month`: the month from its start up to this instant (exclusive), after the
   * month's start and not after its end. Exporting the same cut-off again returns the same
   * file.
   */
  cutoff?: InputMaybe<Scalars['DateTime']['input']>;
  /** Exclusive end of a range. */
  end?: InputMaybe<Scalars['DateTime']['input']>;
  /** `YYYY-MM`: that UTC month. */
  month?: InputMaybe<Scalars['String']['input']>;
  /** Inclusive start of a range; with `end`, instead of `month`. */
  start?: InputMaybe<Scalars['DateTime']['input']>;
  /**
   * With `month`: the month to date by the server's clock, up to now in whole seconds (the
   * cut-off it chose is the export's `periodEnd`; asking for that `cutoff` again gives the
   * same file, so usage an agent reports only after the export is in the next one, not in
   * that file). A month that has ended: the whole month. Not with `cutoff`.
   */
  toDate?: InputMaybe<Scalars['Boolean']['input']>;
};

export type PolicyDo =
  | 'ABORT_JOB'
  | 'COMPLETE_JOB'
  | 'RESTART_JOB'
  | 'RESTART_TASK';

/**
 * `{ on: { task_succeeded: main }, do: complete_job }` flattened: `task` names the task of
 * TASK_SUCCEEDED/TASK_FAILED, `max` the restarts of RESTART_JOB.
 */
export type PolicyInput = {
  do: PolicyDo;
  max?: InputMaybe<Scalars['Int']['input']>;
  on: PolicyOn;
  task?: InputMaybe<Scalars['String']['input']>;
};

export type PolicyOn =
  | 'JOB_TIMEOUT'
  | 'REPLICA_FAILED'
  | 'TASK_FAILED'
  | 'TASK_SUCCEEDED';

/** A queue's over-quota weight in one node pool, where it differs from its weight. */
export type PoolWeight = {
  __typename?: 'PoolWeight';
  pool: Scalars['String']['output'];
  weight: Scalars['Float']['output'];
};

/** One pool's weight in an `updateQueue`. */
export type PoolWeightInput = {
  pool: Scalars['String']['input'];
  weight: Scalars['Float']['input'];
};

/** One price of one GPU model, valid in `[effectiveFrom, effectiveTo)`. */
export type PriceBookEntry = {
  __typename?: 'PriceBookEntry';
  contractedPricePerGpuHour: Scalars['String']['output'];
  currency: Scalars['String']['output'];
  effectiveFrom: Scalars['DateTime']['output'];
  /** `null`: until further notice. */
  effectiveTo?: Maybe<Scalars['DateTime']['output']>;
  gpuModel: Scalars['String']['output'];
  id: Scalars['ID']['output'];
  /** Per GPU-hour, exact decimal (six fractional digits). */
  listPricePerGpuHour: Scalars['String']['output'];
};

/** A project, with the caller's role in it. Only built after authorization. */
export type Project = {
  __typename?: 'Project';
  /**
   * The project's monthly budget and its spending (null: none set; `Tenant.budget` may
   * still bind it).
   */
  budget?: Maybe<Budget>;
  createdAt: Scalars['DateTime']['output'];
  id: Scalars['ID']['output'];
  /** Jobs, newest first; `after` is the `endCursor` of the previous page. */
  jobs: JobConnection;
  /** Direct members of the project (tenant admins hold their role through the tenant). */
  members: Array<Member>;
  myRole: RoleName;
  name: Scalars['String']['output'];
  queues: Array<Queue>;
  /**
   * Its weight among its tenant's projects and its guarantees in fair share
   * (`setProjectShare`).
   */
  share: ShareSettings;
  slug: Scalars['String']['output'];
  tenantId: Scalars['ID']['output'];
};


/** A project, with the caller's role in it. Only built after authorization. */
export type ProjectJobsArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  filter?: InputMaybe<JobFilterInput>;
  first?: Scalars['Int']['input'];
};

/** The roles that can be granted on a project. */
export type ProjectRole =
  | 'MEMBER'
  | 'PROJECT_ADMIN'
  | 'VIEWER';

export type Query = {
  __typename?: 'Query';
  /** The caller's API tokens, revoked and expired ones included; never the secrets. */
  apiTokens: Array<ApiToken>;
  /**
   * Platform admins: the newest operations on the fleet and the tenancy, newest first
   * (`clusterId`: that cluster's and its nodes' only).
   */
  auditEvents: Array<AuditEvent>;
  cluster: Cluster;
  /** Every registered cluster (any signed-in user: the fleet is shared). */
  clusters: Array<Cluster>;
  /** One job, with its tasks, replicas and events. */
  job: Job;
  /**
   * A replica's output (viewer role in the job's project): the task's (default: the first)
   * replica `replica` (default 0), the last `tail` lines (1 to 10000; default all that fit),
   * only lines after `since`, at most `maxBytes` of text (the newest that fit). Read from the
   * agent of the job's cluster: a CONFLICT error when it does not answer within 5 s.
   */
  jobLogs: LogPage;
  /**
   * Jobs of every project the caller may read, newest first; `after` is the `endCursor`
   * of the previous page.
   */
  jobs: JobConnection;
  /** The authenticated caller. */
  me: User;
  /** Every price of every GPU model, by model then start. */
  priceBook: Array<PriceBookEntry>;
  /** One project by id or slug (exactly one of them). */
  project: Project;
  /** Projects the caller can see, with the caller's role in each. */
  projects: Array<Project>;
  /** One live service by project slug and name. */
  service: Service;
  /** The live services of the projects the caller can see (one project: `project`, a slug). */
  services: Array<Service>;
  /** Tenants in which the caller has a role (all of them for a platform admin). */
  tenants: Array<Tenant>;
  /**
   * GPU usage and its cost in `period`, grouped by `groupBy` (in the order given), over
   * the projects the caller can see.
   */
  usage: UsageReport;
  /**
   * The work of a project the caller can see, of every type: its jobs and workspaces that
   * have not ended (newest first) and its live services.
   */
  workloads: Array<Workload>;
};


export type QueryAuditEventsArgs = {
  clusterId?: InputMaybe<Scalars['String']['input']>;
  first?: Scalars['Int']['input'];
};


export type QueryClusterArgs = {
  id: Scalars['String']['input'];
};


export type QueryJobArgs = {
  id: Scalars['ID']['input'];
};


export type QueryJobLogsArgs = {
  jobId: Scalars['ID']['input'];
  maxBytes?: Scalars['Int']['input'];
  replica?: InputMaybe<Scalars['Int']['input']>;
  since?: InputMaybe<Scalars['DateTime']['input']>;
  tail?: InputMaybe<Scalars['Int']['input']>;
  task?: InputMaybe<Scalars['String']['input']>;
};


export type QueryJobsArgs = {
  after?: InputMaybe<Scalars['String']['input']>;
  filter?: InputMaybe<JobsFilter>;
  first?: Scalars['Int']['input'];
};


export type QueryProjectArgs = {
  id?: InputMaybe<Scalars['ID']['input']>;
  slug?: InputMaybe<Scalars['String']['input']>;
};


export type QueryServiceArgs = {
  name: Scalars['String']['input'];
  project: Scalars['String']['input'];
};


export type QueryServicesArgs = {
  project?: InputMaybe<Scalars['String']['input']>;
};


export type QueryUsageArgs = {
  filter?: InputMaybe<UsageFilter>;
  groupBy?: InputMaybe<Array<UsageDimension>>;
  period: PeriodInput;
};


export type QueryWorkloadsArgs = {
  project: Scalars['String']['input'];
};

export type Queue = {
  __typename?: 'Queue';
  canBorrow: Scalars['Boolean']['output'];
  /** The runtime limit of a job that names none. */
  defaultRuntimeSeconds?: Maybe<Scalars['Int']['output']>;
  /**
   * Its fair share of the fleet's GPUs now (tenant, project and queue weights and
   * guarantees), and what its work holds.
   */
  fairShare: QueueFairShare;
  id: Scalars['ID']['output'];
  /**
   * GPUs of its `gpu` guarantee kept for interactive workspaces: other work is admitted
   * as if its guarantee and limit were smaller by what workspaces do not hold of them, so a
   * workspace starts without waiting behind the queue's batch work. 0: none.
   */
  interactiveReserveGpus: Scalars['Float']['output'];
  /** No job of the queue may ask for a longer runtime. */
  maxRuntimeSeconds?: Maybe<Scalars['Int']['output']>;
  /**
   * Aging: after this long waiting, and again after each further period, a job's priority
   * is raised one class (never to `critical`). `null`: no aging.
   */
  maxWaitSeconds?: Maybe<Scalars['Int']['output']>;
  name: Scalars['String']['output'];
  /** Its over-quota weight in the node pools where it differs from `weight`. */
  poolWeights: Array<PoolWeight>;
  quotas: Array<Quota>;
  /**
   * A daily window, `HH:MM-HH:MM` UTC, in which the queue's borrowed work is suspended (and
   * resumed after it). `null`: never.
   */
  suspendBorrowedDuring?: Maybe<Scalars['String']['output']>;
  /** What the queue's admitted jobs hold now, per resource key. */
  usage: Array<ResourceAmount>;
  weight: Scalars['Float']['output'];
};

/** A queue's fair share of the fleet's GPUs now, and what its work holds. */
export type QueueFairShare = {
  __typename?: 'QueueFairShare';
  /**
   * GPUs the hierarchy's weights and guarantees entitle the queue to, given what every queue
   * holds and waits for now.
   */
  fairGpus: Scalars['Float']['output'];
  /** GPUs its dispatched and running jobs hold. */
  heldGpus: Scalars['Float']['output'];
};

/** One quota: amounts of `gpu` and `gpu/<model>` are GPU milli (1000 = one GPU). */
export type Quota = {
  __typename?: 'Quota';
  guaranteed: Scalars['Int']['output'];
  /** `null`: the queue may borrow without bound. */
  limit?: Maybe<Scalars['Int']['output']>;
  resource: Scalars['String']['output'];
};

/** Which quota would refuse the job. */
export type QuotaShortfall = {
  __typename?: 'QuotaShortfall';
  demand: Scalars['Int']['output'];
  limit: Scalars['Int']['output'];
  queue: Scalars['String']['output'];
  resource: Scalars['String']['output'];
  used: Scalars['Int']['output'];
};

/** An HTTP readiness check of a replica. */
export type ReadinessInput = {
  initialDelaySeconds?: Scalars['Int']['input'];
  /** Path of a GET that answers 2xx/3xx once the replica takes requests. */
  path: Scalars['String']['input'];
  periodSeconds?: Scalars['Int']['input'];
};

export type Replica = {
  __typename?: 'Replica';
  clusterId?: Maybe<Scalars['String']['output']>;
  devices?: Maybe<Scalars['JSON']['output']>;
  epoch?: Maybe<Scalars['Int']['output']>;
  /**
   * The main container's exit code once the replica ended, when one is known (a replica
   * stopped before it ran, or whose node was lost, has none).
   */
  exitCode?: Maybe<Scalars['Int']['output']>;
  id: Scalars['ID']['output'];
  index: Scalars['Int']['output'];
  node?: Maybe<Scalars['String']['output']>;
  state: Scalars['String']['output'];
  taskId: Scalars['ID']['output'];
  /** Why the replica ended (null while it has not). */
  termination?: Maybe<Termination>;
  updatedAt: Scalars['DateTime']['output'];
  /**
   * Its latest CPU, memory, disk and network use while it runs (null before the first
   * reading and once it ended). Whoever may read the replica may read it.
   */
  usage?: Maybe<ReplicaUsage>;
};

/** A running replica's latest CPU, memory, disk and network use. */
export type ReplicaUsage = {
  __typename?: 'ReplicaUsage';
  at: Scalars['DateTime']['output'];
  cpuCores: Scalars['Float']['output'];
  diskReadBps: Scalars['Int']['output'];
  diskWriteBps: Scalars['Int']['output'];
  memoryMib: Scalars['Int']['output'];
  netRxBps: Scalars['Int']['output'];
  netTxBps: Scalars['Int']['output'];
};

/**
 * An amount of one quota resource: a tenant's or project's guarantee or limit, a queue's usage
 * (GPU keys in milli).
 */
export type ResourceAmount = {
  __typename?: 'ResourceAmount';
  amount: Scalars['Int']['output'];
  resource: Scalars['String']['output'];
};

/** One guarantee or limit in a `setTenantShare` / `setProjectShare`. */
export type ResourceAmountInput = {
  amount: Scalars['Int']['input'];
  resource: Scalars['String']['input'];
};

export type ResourcesInput = {
  cpuMilli?: Scalars['Int']['input'];
  gpuMemoryMib?: InputMaybe<Scalars['Int']['input']>;
  /** 1..1000: a fraction of one GPU (only with gpus = 1). */
  gpuMilli?: InputMaybe<Scalars['Int']['input']>;
  gpuModels?: Array<Scalars['String']['input']>;
  gpus?: Scalars['Int']['input'];
  memoryMib?: Scalars['Int']['input'];
  /**
   * One MIG instance of this profile (`1g.10gb`, `3g.40gb`, ...) on a GPU in MIG mode,
   * instead of whole GPUs or a share: then `gpus` is 1 (or left out), `gpuMilli` and
   * `gpuMemoryMib` are left out, and every model named in `gpuModels` must offer it.
   */
  migProfile?: InputMaybe<Scalars['String']['input']>;
};

/** A role as the API names it. */
export type RoleName =
  | 'MEMBER'
  | 'PLATFORM_ADMIN'
  | 'PROJECT_ADMIN'
  | 'TENANT_ADMIN'
  | 'VIEWER';

/** How a new revision replaces the old replicas. */
export type RolloutInput = {
  maxSurge?: Scalars['Int']['input'];
  maxUnavailable?: Scalars['Int']['input'];
};

/** How long a job is expected to run, from the jobs like it that finished. */
export type RuntimePrediction = {
  __typename?: 'RuntimePrediction';
  /**
   * Which jobs: "same name and shape", "same name", "same image and shape", "same user
   * and shape", "same shape", "same project" or "all finished jobs".
   */
  basis: Scalars['String']['output'];
  /** The median run time of the similar jobs, seconds (at most the job's maximum runtime). */
  p50Seconds: Scalars['Int']['output'];
  /** The 90th percentile, seconds: what backfill trusts when the job gives no maximum. */
  p90Seconds: Scalars['Int']['output'];
  /** How many finished jobs it was made from. */
  samples: Scalars['Int']['output'];
};

/** One change of the desired replica count. */
export type ScalingEventObj = {
  __typename?: 'ScalingEventObj';
  at: Scalars['DateTime']['output'];
  fromReplicas: Scalars['Int']['output'];
  reason: Scalars['String']['output'];
  /** What autoscaling measured (requests per second or GPU busy %); absent for a manual scale. */
  signal?: Maybe<Scalars['Float']['output']>;
  toReplicas: Scalars['Int']['output'];
};

export type ScalingMetric =
  /**
   * The mean GPU busy percentage of its running replicas, from the profiler; the target
   * is a percentage.
   */
  | 'GPU_UTILIZATION'
  /**
   * Requests per second reported for the service (by its replicas or a metrics adapter;
   * the sim's synthetic load); the target is requests per second per replica.
   */
  | 'REQUEST_RATE';

export type Scope =
  | 'ANY'
  | 'NODE'
  | 'NVLINK'
  | 'RACK';

export type Service = Workload & {
  __typename?: 'Service';
  autoscaling?: Maybe<AutoscalingObj>;
  /** Why it is short of replicas, when known (a full quota). */
  condition?: Maybe<Scalars['String']['output']>;
  /**
   * What its replicas' GPUs have cost since it was created, every replica it ever ran
   * (the `Workload` interface's).
   */
  cost?: Maybe<WorkloadCost>;
  createdAt: Scalars['DateTime']['output'];
  /** The count it runs at now. */
  desiredReplicas: Scalars['Int']['output'];
  /**
   * The mean GPU busy percentage of its running replicas, from the profiler's samples of
   * the last minute (what a GPU_UTILIZATION rule scales on); null while none is measured.
   */
  gpuUtilization?: Maybe<ServiceUtilization>;
  id: Scalars['ID']['output'];
  /** The image of the current revision. */
  image?: Maybe<Scalars['String']['output']>;
  loadReportedAt?: Maybe<Scalars['DateTime']['output']>;
  maxReplicas: Scalars['Int']['output'];
  maxSurge: Scalars['Int']['output'];
  maxUnavailable: Scalars['Int']['output'];
  minReplicas: Scalars['Int']['output'];
  name: Scalars['String']['output'];
  /** Who created it (subject). */
  owner: Scalars['String']['output'];
  /** The `Workload` interface's name of `owner`. */
  ownerSubject: Scalars['String']['output'];
  /** Its state as a name (`READY`, ...): the `Workload` interface's phase. */
  phase: Scalars['String']['output'];
  /** The port a replica serves on, and its readiness path. */
  port: Scalars['Int']['output'];
  /** The project's slug. */
  project: Scalars['String']['output'];
  /** The `Workload` interface's name of `project`. */
  projectSlug: Scalars['String']['output'];
  /** The queue's name. */
  queue: Scalars['String']['output'];
  /** The `Workload` interface's name of `queue`. */
  queueName: Scalars['String']['output'];
  readinessPath?: Maybe<Scalars['String']['output']>;
  /** Live replicas that serve (running). */
  readyReplicas: Scalars['Int']['output'];
  /** Its live replicas (jobs of one replica each), oldest first. */
  replicas: Array<Job>;
  /** Live replicas per cluster (a service may be split over several). */
  replicasByCluster: Array<ClusterReplicasObj>;
  /** The request rate last set or reported (requests per second), and when. */
  requestsPerSecond?: Maybe<Scalars['Float']['output']>;
  /** The revision new replicas run. */
  revision: Scalars['Int']['output'];
  /** Its revisions, newest first. */
  revisions: Array<ServiceRevisionObj>;
  /** Changes of the desired count, newest first (at most `limit`, default 50, up to 500). */
  scalingHistory: Array<ScalingEventObj>;
  state: ServiceState;
  /**
   * The `Workload` interface's timeline: creation, revisions, scaling and deletion, the
   * latest `limit` (default 100, up to 1000), oldest first.
   */
  timeline: Array<WorkloadEvent>;
  updatedAt: Scalars['DateTime']['output'];
  /** Always `INFERENCE` (the `Workload` interface's). */
  workloadType: WorkloadType;
};


export type ServiceScalingHistoryArgs = {
  limit?: Scalars['Int']['input'];
};


export type ServiceTimelineArgs = {
  limit?: Scalars['Int']['input'];
};

/** What `applyService` did. */
export type ServiceApplied =
  /** A new service. */
  | 'CREATED'
  /** The replica spec changed: a new revision, rolled out within the rollout's bounds. */
  | 'NEW_REVISION'
  /** Only the bounds, autoscaling or rollout changed (or nothing). */
  | 'UPDATED';

/** A service as applied: created when its name is new in the project, else updated. */
export type ServiceInput = {
  autoscaling?: InputMaybe<AutoscalingInput>;
  clusterSelector?: Array<KeyValueInput>;
  command?: Array<Scalars['String']['input']>;
  env?: Array<KeyValueInput>;
  image: Scalars['String']['input'];
  labels?: Array<KeyValueInput>;
  /** At most this many; default: `minReplicas` (at least 1). */
  maxReplicas?: InputMaybe<Scalars['Int']['input']>;
  /** At least this many replicas run; they are never preempted (within the queue's guarantee). */
  minReplicas?: Scalars['Int']['input'];
  /** A DNS label, unique among the project's live services. */
  name: Scalars['String']['input'];
  pools?: Array<Scalars['String']['input']>;
  /** The port a replica serves on. */
  port: Scalars['Int']['input'];
  /** Priority class name of its replicas: low, normal (default), high, critical. */
  priority?: InputMaybe<Scalars['String']['input']>;
  /** Project slug. */
  project: Scalars['String']['input'];
  /** Queue name; the project's `default` queue when absent. */
  queue?: InputMaybe<Scalars['String']['input']>;
  readiness?: InputMaybe<ReadinessInput>;
  /**
   * The count to run now (without autoscaling, the count it keeps). Default: the current
   * count, or `minReplicas` (at least 1) for a new service.
   */
  replicas?: InputMaybe<Scalars['Int']['input']>;
  /** What one replica gets. */
  resources: ResourcesInput;
  rollout?: InputMaybe<RolloutInput>;
};

/** One revision of the replica spec. */
export type ServiceRevisionObj = {
  __typename?: 'ServiceRevisionObj';
  createdAt: Scalars['DateTime']['output'];
  /** The image its replicas run. */
  image?: Maybe<Scalars['String']['output']>;
  revision: Scalars['Int']['output'];
};

export type ServiceState =
  /** Fewer ready replicas than its minimum. */
  | 'DEGRADED'
  /** Deleted: its replicas are stopped. */
  | 'DELETED'
  /** At or above its minimum, on its way to the desired count or rolling out a revision. */
  | 'PROGRESSING'
  /** Its desired count of replicas of the current revision is ready. */
  | 'READY';

/** Its running replicas' GPU utilization. */
export type ServiceUtilization = {
  __typename?: 'ServiceUtilization';
  /** Their mean GPU busy percentage. */
  busyPct: Scalars['Float']['output'];
  /** How many replicas were measured. */
  replicas: Scalars['Int']['output'];
};

/** A tenant's or project's place in fair share. */
export type ShareSettings = {
  __typename?: 'ShareSettings';
  /**
   * What its queues together are entitled to before capacity above guarantees is shared
   * (keys and units of queue quotas: `gpu`, `gpu/<model>`, `pool/<pool>` in GPU milli).
   */
  guarantees: Array<ResourceAmount>;
  /**
   * What its queues together may be admitted for, at most (same keys and units); a job
   * that would pass one is refused with QUOTA_EXCEEDED naming the project or tenant.
   */
  limits: Array<ResourceAmount>;
  /**
   * Relative weight among its siblings (tenants among tenants, a tenant's projects among
   * themselves) when capacity above guarantees is shared.
   */
  weight: Scalars['Float']['output'];
};

/** When a waiting job is expected to start. */
export type StartEstimate = {
  __typename?: 'StartEstimate';
  /**
   * The earliest time it is expected to start: when the GPUs it needs are expected free,
   * counting the predicted ends of running work and of the jobs served before it. Quotas,
   * fair share between queues and fragmentation are not modelled, so it may start later.
   */
  at: Scalars['DateTime']['output'];
  /** Jobs the allocator serves before it, fleet-wide. */
  jobsAhead: Scalars['Int']['output'];
};

/** Result of `submitJob`. */
export type SubmitJobPayload = {
  __typename?: 'SubmitJobPayload';
  /** Admitted above the queue's guarantee (preemptible by other queues). */
  borrowed: Scalars['Boolean']['output'];
  /**
   * Set when the project's or its tenant's monthly budget is past its warning threshold
   * (or, for a soft budget, past its amount): what to tell the submitter.
   */
  budgetWarning?: Maybe<Scalars['String']['output']>;
  job: Job;
};

export type Subscription = {
  __typename?: 'Subscription';
  /**
   * Status of every cluster (or of `clusterId`) each time its capacity, health or cordon
   * changes. Any signed-in user.
   */
  clusterUpdates: ClusterStatus;
  /**
   * A replica's output as it is written (viewer role in the job's project): first its last
   * `tail` lines (default 100), then every second the lines written since, until the replica
   * ended (its last page has `ended`). Follows the job to another cluster when it moves.
   */
  followJobLogs: LogPage;
  /** The events of one job as they are recorded (viewer role or above in its project). */
  jobEvents: JobEvent;
  /** Every job event of one project as it is recorded (viewer role or above). */
  projectJobEvents: JobEvent;
};


export type SubscriptionClusterUpdatesArgs = {
  clusterId?: InputMaybe<Scalars['String']['input']>;
};


export type SubscriptionFollowJobLogsArgs = {
  jobId: Scalars['ID']['input'];
  replica?: InputMaybe<Scalars['Int']['input']>;
  tail?: Scalars['Int']['input'];
  task?: InputMaybe<Scalars['String']['input']>;
};


export type SubscriptionJobEventsArgs = {
  jobId: Scalars['ID']['input'];
};


export type SubscriptionProjectJobEventsArgs = {
  projectId: Scalars['ID']['input'];
};

export type Task = {
  __typename?: 'Task';
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  /** How many replicas the task asks for (`replicas` lists them). */
  replicaCount: Scalars['Int']['output'];
  /** The task's replicas, by index. */
  replicas: Array<Replica>;
  /**
   * The task as submitted (image, command, env, topology ...). Loaded only when selected,
   * for every task of the request in one statement.
   */
  spec: Scalars['JSON']['output'];
  state: Scalars['String']['output'];
};

export type TaskInput = {
  command?: Array<Scalars['String']['input']>;
  env?: Array<KeyValueInput>;
  image: Scalars['String']['input'];
  name: Scalars['String']['input'];
  replicas?: Scalars['Int']['input'];
  resources: ResourcesInput;
  topology?: InputMaybe<TopologyInput>;
};

export type Tenant = {
  __typename?: 'Tenant';
  /** The tenant's monthly budget and its spending (null: none set). */
  budget?: Maybe<Budget>;
  createdAt: Scalars['DateTime']['output'];
  id: Scalars['ID']['output'];
  /**
   * The caller's role over the whole tenant: TENANT_ADMIN (creates projects, exports its
   * usage), PLATFORM_ADMIN, or null (a role in some of its projects only), so clients offer
   * only what the caller may do.
   */
  myRole?: Maybe<RoleName>;
  name: Scalars['String']['output'];
  /**
   * What the tenant's members may do to others' work; every project of the tenant inherits
   * it. Set by platform admins (`setTenantRights`).
   */
  rights: TenantRights;
  /** Its weight among tenants and its guarantees in fair share (`setTenantShare`). */
  share: ShareSettings;
  slug: Scalars['String']['output'];
};

/** A tenant's rights over priority and preemption. */
export type TenantRights = {
  __typename?: 'TenantRights';
  /**
   * The highest priority class (low, normal, high, critical) its members may submit at or
   * raise a job to.
   */
  maxPriorityClass: Scalars['String']['output'];
  /** Whether its jobs may have others' work evicted to make room for them. */
  mayPreempt: Scalars['Boolean']['output'];
  /** With `reclaimFromAny` false: the other tenants whose borrowed work its jobs may reclaim. */
  reclaimFrom: Array<Scalars['ID']['output']>;
  /**
   * Its jobs may reclaim borrowed work of any tenant (true), or only of their own tenant and
   * those in `reclaimFrom` (false).
   */
  reclaimFromAny: Scalars['Boolean']['output'];
};

/** Why a replica ended. */
export type Termination =
  /** Its container could never start (a bad image name, a missing secret). */
  | 'CANNOT_START'
  /** Exited with code 0. */
  | 'COMPLETED'
  /** Ran past its maximum runtime. */
  | 'DEADLINE_EXCEEDED'
  /** Exited with a non-zero code of its own. */
  | 'ERROR'
  /** Evicted by its node (memory or disk pressure) or deleted by Kubernetes for a disruption. */
  | 'EVICTED'
  /** Its node or pod disappeared under it. */
  | 'LOST'
  /** Killed for using more memory than its limit. */
  | 'OOM_KILLED'
  | 'OTHER'
  /** Stopped on request: cancelled, preempted or given back by a shrink. */
  | 'STOPPED';

/** `domain::TokenScope` in the API. */
export type TokenScope =
  /** Queries and subscriptions. */
  | 'READ'
  /** Mutations. */
  | 'WRITE';

export type TopologyInput = {
  scope: Scope;
};

/** A dimension to group usage by. */
export type UsageDimension =
  | 'CLUSTER'
  /** The UTC day, `YYYY-MM-DD`. */
  | 'DAY'
  | 'GPU_MODEL'
  | 'PROJECT'
  /** `<project>/<queue>`: queue names are unique within a project only. */
  | 'QUEUE'
  | 'USER'
  /** The workload type: `batch`, `workspace` or `inference`. */
  | 'WORKLOAD_TYPE';

/** A stored FOCUS export. */
export type UsageExport = {
  __typename?: 'UsageExport';
  bytes: Scalars['Int']['output'];
  createdAt: Scalars['DateTime']['output'];
  currency: Scalars['String']['output'];
  /** Relative URL of the file (same authentication as /graphql). */
  downloadUrl: Scalars['String']['output'];
  format: ExportFormat;
  id: Scalars['ID']['output'];
  periodEnd: Scalars['DateTime']['output'];
  periodStart: Scalars['DateTime']['output'];
  /** Charge rows in the file. */
  rows: Scalars['Int']['output'];
  /** Hex SHA-256 of the file (also its HTTP ETag). */
  sha256: Scalars['String']['output'];
  /** `null`: every tenant (a platform export). */
  tenantId?: Maybe<Scalars['ID']['output']>;
};

/** Restricts usage; every field given must match. */
export type UsageFilter = {
  clusterId?: InputMaybe<Scalars['String']['input']>;
  gpuModel?: InputMaybe<Scalars['String']['input']>;
  projectId?: InputMaybe<Scalars['ID']['input']>;
  queueId?: InputMaybe<Scalars['ID']['input']>;
  userId?: InputMaybe<Scalars['ID']['input']>;
};

/** Usage of a period, grouped. */
export type UsageReport = {
  __typename?: 'UsageReport';
  /** Running replicas are counted up to this instant (`min(now, end)`). */
  asOf: Scalars['DateTime']['output'];
  currency: Scalars['String']['output'];
  end: Scalars['DateTime']['output'];
  /** Sorted by the group keys; with no `groupBy`, one row with the total (none without usage). */
  rows: Array<UsageRow>;
  start: Scalars['DateTime']['output'];
};

/** Usage of one group. Only the dimensions grouped by are set. */
export type UsageRow = {
  __typename?: 'UsageRow';
  /** Priced pieces (interval x day x price) summed into this row. */
  charges: Scalars['Int']['output'];
  cluster?: Maybe<Scalars['String']['output']>;
  contractedCost: Scalars['String']['output'];
  contractedCostValue: Scalars['Float']['output'];
  day?: Maybe<Scalars['String']['output']>;
  /** What is billed: the contracted cost (no commitment discounts yet). */
  effectiveCost: Scalars['String']['output'];
  effectiveCostValue: Scalars['Float']['output'];
  /** Exact, nine fractional digits. */
  gpuHours: Scalars['String']['output'];
  /** Approximate copies of the amounts above, for charts. */
  gpuHoursValue: Scalars['Float']['output'];
  gpuModel?: Maybe<Scalars['String']['output']>;
  listCost: Scalars['String']['output'];
  listCostValue: Scalars['Float']['output'];
  project?: Maybe<Scalars['String']['output']>;
  queue?: Maybe<Scalars['String']['output']>;
  /** The user's subject. */
  user?: Maybe<Scalars['String']['output']>;
  /** `batch`, `workspace` or `inference`. */
  workloadType?: Maybe<Scalars['String']['output']>;
};

export type User = {
  __typename?: 'User';
  displayName?: Maybe<Scalars['String']['output']>;
  email?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  platformAdmin: Scalars['Boolean']['output'];
  subject: Scalars['String']['output'];
};

/** Why a job waits: one reason per cluster, plus the whole as one sentence. */
export type WhyPending = {
  __typename?: 'WhyPending';
  reasons: Array<PendingReason>;
  summary: Scalars['String']['output'];
};

/**
 * What every kind of work shares: batch jobs and workspaces (`Job`, told apart by
 * `workloadType`) and inference services (`Service`).
 */
export type Workload = {
  /** What its GPUs have cost until now, priced as `usage` prices them; null, with a CONFLICT error, while a GPU model it ran on has no price. */
  cost?: Maybe<WorkloadCost>;
  createdAt: Scalars['DateTime']['output'];
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  ownerSubject: Scalars['String']['output'];
  /** A job's state or a service's state, by name. */
  phase: Scalars['String']['output'];
  projectSlug: Scalars['String']['output'];
  queueName: Scalars['String']['output'];
  /** What happened to it, oldest first: the latest `limit` entries (default 100, up to 1000). */
  timeline: Array<WorkloadEvent>;
  workloadType: WorkloadType;
};


/**
 * What every kind of work shares: batch jobs and workspaces (`Job`, told apart by
 * `workloadType`) and inference services (`Service`).
 */
export type WorkloadTimelineArgs = {
  limit?: Scalars['Int']['input'];
};

/** What a workload has cost so far. */
export type WorkloadCost = {
  __typename?: 'WorkloadCost';
  asOf: Scalars['DateTime']['output'];
  currency: Scalars['String']['output'];
  /** What is billed. */
  effectiveCost: Scalars['String']['output'];
  effectiveCostValue: Scalars['Float']['output'];
  /** Exact decimal strings (nine fractional digits), as `usage` gives them. */
  gpuHours: Scalars['String']['output'];
  /** Approximate copies, for display. */
  gpuHoursValue: Scalars['Float']['output'];
  listCost: Scalars['String']['output'];
};

/** One entry of a workload's timeline. */
export type WorkloadEvent = {
  __typename?: 'WorkloadEvent';
  /** Who did it, when a person or a component is recorded. */
  actor?: Maybe<Scalars['String']['output']>;
  at: Scalars['DateTime']['output'];
  /**
   * A job's state it entered (`running`, ...), or what happened to a service (`created`,
   * `revision`, `scaled`, `deleted`).
   */
  kind: Scalars['String']['output'];
  message: Scalars['String']['output'];
};

export type WorkloadType =
  /** A batch job: training, evaluation, a pipeline step. */
  | 'BATCH'
  /** Replicas of an inference service. */
  | 'INFERENCE'
  /** An interactive workspace: one user's notebook-style session. */
  | 'WORKSPACE';

/** What makes a job an interactive workspace (`JobInput.workspace`). */
export type Workspace = {
  __typename?: 'Workspace';
  idleAction: IdleAction;
  /** Without GPU activity this long it is warned, then stopped or suspended. */
  idleTimeoutSeconds: Scalars['Int']['output'];
  port: Scalars['Int']['output'];
};

/**
 * An interactive workspace instead of a batch job: one task of one replica whose server
 * listens on `port`, stopped or suspended after `idleTimeout` without GPU activity (a warning
 * event comes first), and ended at the job's `maxRuntime` (its maximum lifetime) like any job.
 */
export type WorkspaceInput = {
  idleAction?: IdleAction;
  /** Humantime (`30m`, `2h`), 10 seconds to 7 days. */
  idleTimeout?: Scalars['String']['input'];
  port?: Scalars['Int']['input'];
};

export type MeQueryVariables = Exact<{ [key: string]: never; }>;


export type MeQuery = { __typename?: 'Query', me: { __typename?: 'User', id: string, subject: string, email?: string | null, displayName?: string | null, platformAdmin: boolean } };

export type QueueFieldsFragment = { __typename?: 'Queue', id: string, name: string, weight: number, canBorrow: boolean, maxWaitSeconds?: number | null, defaultRuntimeSeconds?: number | null, maxRuntimeSeconds?: number | null, suspendBorrowedDuring?: string | null, interactiveReserveGpus: number, fairShare: { __typename?: 'QueueFairShare', fairGpus: number, heldGpus: number }, poolWeights: Array<{ __typename?: 'PoolWeight', pool: string, weight: number }>, quotas: Array<{ __typename?: 'Quota', resource: string, guaranteed: number, limit?: number | null }>, usage: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> };

export type ProjectsQueryVariables = Exact<{ [key: string]: never; }>;


export type ProjectsQuery = { __typename?: 'Query', projects: Array<{ __typename?: 'Project', id: string, tenantId: string, slug: string, name: string, myRole: RoleName, createdAt: string, queues: Array<{ __typename?: 'Queue', id: string, name: string, weight: number, canBorrow: boolean, maxWaitSeconds?: number | null, defaultRuntimeSeconds?: number | null, maxRuntimeSeconds?: number | null, suspendBorrowedDuring?: string | null, interactiveReserveGpus: number, fairShare: { __typename?: 'QueueFairShare', fairGpus: number, heldGpus: number }, poolWeights: Array<{ __typename?: 'PoolWeight', pool: string, weight: number }>, quotas: Array<{ __typename?: 'Quota', resource: string, guaranteed: number, limit?: number | null }>, usage: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> }> }> };

export type ProjectQueryVariables = Exact<{
  slug: Scalars['String']['input'];
}>;


export type ProjectQuery = { __typename?: 'Query', project: { __typename?: 'Project', id: string, tenantId: string, slug: string, name: string, myRole: RoleName, createdAt: string, share: { __typename?: 'ShareSettings', weight: number, guarantees: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }>, limits: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> }, budget?: { __typename?: 'Budget', unit: BudgetUnit, unitLabel: string, amount: string, amountValue: number, softPercent: number, hard: boolean, suspendBorrowed: boolean, periodStart: string, periodEnd: string, spentValue: number, committedValue: number, status: BudgetStatus, updatedAt: string, burnDown: Array<{ __typename?: 'BudgetDay', day: string, spent: number }> } | null, queues: Array<{ __typename?: 'Queue', id: string, name: string, weight: number, canBorrow: boolean, maxWaitSeconds?: number | null, defaultRuntimeSeconds?: number | null, maxRuntimeSeconds?: number | null, suspendBorrowedDuring?: string | null, interactiveReserveGpus: number, fairShare: { __typename?: 'QueueFairShare', fairGpus: number, heldGpus: number }, poolWeights: Array<{ __typename?: 'PoolWeight', pool: string, weight: number }>, quotas: Array<{ __typename?: 'Quota', resource: string, guaranteed: number, limit?: number | null }>, usage: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> }>, members: Array<{ __typename?: 'Member', role: RoleName, user: { __typename?: 'User', id: string, subject: string, email?: string | null, displayName?: string | null } }> } };

export type ProjectJobsQueryVariables = Exact<{
  slug: Scalars['String']['input'];
  filter?: InputMaybe<JobFilterInput>;
  first: Scalars['Int']['input'];
  after?: InputMaybe<Scalars['String']['input']>;
}>;


export type ProjectJobsQuery = { __typename?: 'Query', project: { __typename?: 'Project', id: string, slug: string, myRole: RoleName, queues: Array<{ __typename?: 'Queue', id: string, name: string }>, jobs: { __typename?: 'JobConnection', pageInfo: { __typename?: 'PageInfo', hasNextPage: boolean, endCursor?: string | null }, nodes: Array<{ __typename?: 'Job', id: string, projectId: string, queueId: string, name: string, state: JobState, priority: number, priorityClass: string, preemptible: boolean, borrowed: boolean, submittedBy: string, submittedAt: string, updatedAt: string, clusterId?: string | null, submitter: { __typename?: 'User', id: string, subject: string }, tasks: Array<{ __typename?: 'Task', id: string, name: string, replicaCount: number, state: string }> }> } } };

export type JobQueryVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type JobQuery = { __typename?: 'Query', job: { __typename?: 'Job', id: string, projectId: string, queueId: string, name: string, priority: number, priorityClass: string, preemptible: boolean, state: JobState, borrowed: boolean, submittedBy: string, submittedAt: string, updatedAt: string, clusterId?: string | null, epoch: number, workloadType: WorkloadType, endpoint?: string | null, queuePosition?: number | null, projectSlug: string, queueName: string, spec: unknown, submitter: { __typename?: 'User', id: string, subject: string, displayName?: string | null }, estimatedStart?: { __typename?: 'StartEstimate', at: string, jobsAhead: number } | null, predictedRuntime?: { __typename?: 'RuntimePrediction', p50Seconds: number, p90Seconds: number, samples: number, basis: string } | null, workspace?: { __typename?: 'Workspace', port: number, idleTimeoutSeconds: number, idleAction: IdleAction } | null, whyPending?: { __typename?: 'WhyPending', summary: string, reasons: Array<{ __typename?: 'PendingReason', cluster: string, stage: string, reason: string }> } | null, tasks: Array<{ __typename?: 'Task', id: string, name: string, replicaCount: number, state: string, spec: unknown }>, replicas: Array<{ __typename?: 'Replica', id: string, taskId: string, index: number, state: string, node?: string | null, devices?: unknown | null, clusterId?: string | null, epoch?: number | null, updatedAt: string, exitCode?: number | null, termination?: Termination | null, usage?: { __typename?: 'ReplicaUsage', cpuCores: number, memoryMib: number, diskReadBps: number, diskWriteBps: number, netRxBps: number, netTxBps: number, at: string } | null }>, utilization?: { __typename?: 'JobUtilization', samples: number, avgBusyPct: number, maxBusyPct: number, lastBusyPct?: number | null, avgMemoryUsedMib: number, maxMemoryUsedMib: number, updatedAt: string, usageSamples: number, avgCpuCores?: number | null, maxCpuCores?: number | null, avgMemoryMib?: number | null, maxMemoryMib?: number | null } | null, dispatches: Array<{ __typename?: 'Dispatch', id: string, epoch: number, clusterId: string, dispatchedAt: string, acknowledgedAt?: string | null, outcome: string, reason?: string | null }>, events: Array<{ __typename?: 'JobEvent', id: string, taskId?: string | null, replicaId?: string | null, fromState?: string | null, toState: string, cause: string, actor: string, actorName: string, at: string, clusterId?: string | null, epoch?: number | null }> } };

export type TenantRightsFieldsFragment = { __typename?: 'TenantRights', maxPriorityClass: string, mayPreempt: boolean, reclaimFromAny: boolean, reclaimFrom: Array<string> };

export type ShareFieldsFragment = { __typename?: 'ShareSettings', weight: number, guarantees: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }>, limits: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> };

export type TenantsQueryVariables = Exact<{ [key: string]: never; }>;


export type TenantsQuery = { __typename?: 'Query', tenants: Array<{ __typename?: 'Tenant', id: string, slug: string, name: string, createdAt: string, myRole?: RoleName | null, rights: { __typename?: 'TenantRights', maxPriorityClass: string, mayPreempt: boolean, reclaimFromAny: boolean, reclaimFrom: Array<string> }, share: { __typename?: 'ShareSettings', weight: number, guarantees: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }>, limits: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> } }> };

export type SetTenantShareMutationVariables = Exact<{
  tenantId: Scalars['ID']['input'];
  weight?: InputMaybe<Scalars['Float']['input']>;
  guarantees?: InputMaybe<Array<ResourceAmountInput> | ResourceAmountInput>;
  limits?: InputMaybe<Array<ResourceAmountInput> | ResourceAmountInput>;
}>;


export type SetTenantShareMutation = { __typename?: 'Mutation', setTenantShare: { __typename?: 'Tenant', id: string, share: { __typename?: 'ShareSettings', weight: number, guarantees: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }>, limits: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> } } };

export type SetProjectShareMutationVariables = Exact<{
  projectId: Scalars['ID']['input'];
  weight?: InputMaybe<Scalars['Float']['input']>;
  guarantees?: InputMaybe<Array<ResourceAmountInput> | ResourceAmountInput>;
  limits?: InputMaybe<Array<ResourceAmountInput> | ResourceAmountInput>;
}>;


export type SetProjectShareMutation = { __typename?: 'Mutation', setProjectShare: { __typename?: 'Project', id: string, share: { __typename?: 'ShareSettings', weight: number, guarantees: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }>, limits: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> } } };

export type SetTenantRightsMutationVariables = Exact<{
  tenantId: Scalars['ID']['input'];
  maxPriorityClass?: InputMaybe<Scalars['String']['input']>;
  mayPreempt?: InputMaybe<Scalars['Boolean']['input']>;
  reclaimFromAny?: InputMaybe<Scalars['Boolean']['input']>;
  reclaimFrom?: InputMaybe<Array<Scalars['ID']['input']> | Scalars['ID']['input']>;
}>;


export type SetTenantRightsMutation = { __typename?: 'Mutation', setTenantRights: { __typename?: 'Tenant', id: string, rights: { __typename?: 'TenantRights', maxPriorityClass: string, mayPreempt: boolean, reclaimFromAny: boolean, reclaimFrom: Array<string> } } };

export type SubmitJobMutationVariables = Exact<{
  input: JobInput;
}>;


export type SubmitJobMutation = { __typename?: 'Mutation', submitJob: { __typename?: 'SubmitJobPayload', borrowed: boolean, budgetWarning?: string | null, job: { __typename?: 'Job', id: string, name: string, state: JobState } } };

export type CancelJobMutationVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type CancelJobMutation = { __typename?: 'Mutation', cancelJob: { __typename?: 'Job', id: string, state: JobState, updatedAt: string } };

export type SuspendJobMutationVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type SuspendJobMutation = { __typename?: 'Mutation', suspendJob: { __typename?: 'Job', id: string, state: JobState, updatedAt: string } };

export type ResumeJobMutationVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type ResumeJobMutation = { __typename?: 'Mutation', resumeJob: { __typename?: 'Job', id: string, state: JobState, updatedAt: string } };

export type CreateTenantMutationVariables = Exact<{
  slug: Scalars['String']['input'];
  name: Scalars['String']['input'];
}>;


export type CreateTenantMutation = { __typename?: 'Mutation', createTenant: { __typename?: 'Tenant', id: string, slug: string, name: string, createdAt: string, rights: { __typename?: 'TenantRights', maxPriorityClass: string, mayPreempt: boolean, reclaimFromAny: boolean, reclaimFrom: Array<string> } } };

export type CreateProjectMutationVariables = Exact<{
  tenantId: Scalars['ID']['input'];
  slug: Scalars['String']['input'];
  name: Scalars['String']['input'];
}>;


export type CreateProjectMutation = { __typename?: 'Mutation', createProject: { __typename?: 'Project', id: string, slug: string, name: string } };

export type AddMemberMutationVariables = Exact<{
  projectId: Scalars['ID']['input'];
  subject: Scalars['String']['input'];
  role: ProjectRole;
}>;


export type AddMemberMutation = { __typename?: 'Mutation', addMember: boolean };

export type CreateQueueMutationVariables = Exact<{
  projectId: Scalars['ID']['input'];
  name: Scalars['String']['input'];
  weight: Scalars['Float']['input'];
  canBorrow: Scalars['Boolean']['input'];
}>;


export type CreateQueueMutation = { __typename?: 'Mutation', createQueue: { __typename?: 'Queue', id: string, name: string, weight: number, canBorrow: boolean, maxWaitSeconds?: number | null, defaultRuntimeSeconds?: number | null, maxRuntimeSeconds?: number | null, suspendBorrowedDuring?: string | null, interactiveReserveGpus: number, fairShare: { __typename?: 'QueueFairShare', fairGpus: number, heldGpus: number }, poolWeights: Array<{ __typename?: 'PoolWeight', pool: string, weight: number }>, quotas: Array<{ __typename?: 'Quota', resource: string, guaranteed: number, limit?: number | null }>, usage: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> } };

export type UpdateQueueMutationVariables = Exact<{
  queueId: Scalars['ID']['input'];
  maxWaitSeconds?: InputMaybe<Scalars['Int']['input']>;
  defaultRuntimeSeconds?: InputMaybe<Scalars['Int']['input']>;
  maxRuntimeSeconds?: InputMaybe<Scalars['Int']['input']>;
  suspendBorrowedDuring?: InputMaybe<Scalars['String']['input']>;
  poolWeights?: InputMaybe<Array<PoolWeightInput> | PoolWeightInput>;
  interactiveReserveGpus?: InputMaybe<Scalars['Float']['input']>;
}>;


export type UpdateQueueMutation = { __typename?: 'Mutation', updateQueue: { __typename?: 'Queue', id: string, name: string, weight: number, canBorrow: boolean, maxWaitSeconds?: number | null, defaultRuntimeSeconds?: number | null, maxRuntimeSeconds?: number | null, suspendBorrowedDuring?: string | null, interactiveReserveGpus: number, fairShare: { __typename?: 'QueueFairShare', fairGpus: number, heldGpus: number }, poolWeights: Array<{ __typename?: 'PoolWeight', pool: string, weight: number }>, quotas: Array<{ __typename?: 'Quota', resource: string, guaranteed: number, limit?: number | null }>, usage: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> } };

export type UpdateQuotaMutationVariables = Exact<{
  queueId: Scalars['ID']['input'];
  resource: Scalars['String']['input'];
  guaranteed: Scalars['Int']['input'];
  limit?: InputMaybe<Scalars['Int']['input']>;
}>;


export type UpdateQuotaMutation = { __typename?: 'Mutation', updateQuota: { __typename?: 'Queue', id: string, name: string, weight: number, canBorrow: boolean, maxWaitSeconds?: number | null, defaultRuntimeSeconds?: number | null, maxRuntimeSeconds?: number | null, suspendBorrowedDuring?: string | null, interactiveReserveGpus: number, fairShare: { __typename?: 'QueueFairShare', fairGpus: number, heldGpus: number }, poolWeights: Array<{ __typename?: 'PoolWeight', pool: string, weight: number }>, quotas: Array<{ __typename?: 'Quota', resource: string, guaranteed: number, limit?: number | null }>, usage: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> } };

export type SetJobPriorityMutationVariables = Exact<{
  id: Scalars['ID']['input'];
  priority: Scalars['String']['input'];
}>;


export type SetJobPriorityMutation = { __typename?: 'Mutation', setJobPriority: { __typename?: 'Job', id: string, priority: number, priorityClass: string, updatedAt: string } };

export type DryRunJobMutationVariables = Exact<{
  input: JobInput;
}>;


export type DryRunJobMutation = { __typename?: 'Mutation', dryRunJob: { __typename?: 'DryRunResult', admitted: boolean, borrowed: boolean, cluster?: string | null, quotaExceeded?: { __typename?: 'QuotaShortfall', queue: string, resource: string, used: number, demand: number, limit: number } | null, whyPending?: { __typename?: 'WhyPending', summary: string, reasons: Array<{ __typename?: 'PendingReason', cluster: string, stage: string, reason: string }> } | null } };

export type ProjectJobEventsSubscriptionVariables = Exact<{
  projectId: Scalars['ID']['input'];
}>;


export type ProjectJobEventsSubscription = { __typename?: 'Subscription', projectJobEvents: { __typename?: 'JobEvent', id: string, jobId: string, toState: string } };

export type JobEventsSubscriptionVariables = Exact<{
  jobId: Scalars['ID']['input'];
}>;


export type JobEventsSubscription = { __typename?: 'Subscription', jobEvents: { __typename?: 'JobEvent', id: string, toState: string } };

export type ClusterUpdatesSubscriptionVariables = Exact<{ [key: string]: never; }>;


export type ClusterUpdatesSubscription = { __typename?: 'Subscription', clusterUpdates: { __typename?: 'ClusterStatus', id: string, health: string } };

export type ClusterFieldsFragment = { __typename?: 'Cluster', id: string, displayName?: string | null, health: string, cordoned: boolean, draining: boolean, lastHeartbeat?: string | null, capacityAt?: string | null, agentVersion?: string | null, controlPlaneMismatch: boolean, capacity: Array<{ __typename?: 'ModelCapacityObj', model: string, totalGpus: number, freeWholeGpus: number }>, pools: Array<{ __typename?: 'NodePool', name: string, nodes: number, totalGpus: number, freeWholeGpus: number }>, nodes: Array<{ __typename?: 'ClusterNode', name: string, healthy: boolean, cordoned: boolean, draining: boolean, rack?: string | null, pool?: string | null, gpus: Array<{ __typename?: 'Gpu', index: number, model: string, memoryMib: number, healthy: boolean, allocatedMilli: number, busyPct?: number | null, memoryUsedMib?: number | null, metricsAt?: string | null }> }> };

export type ClustersQueryVariables = Exact<{ [key: string]: never; }>;


export type ClustersQuery = { __typename?: 'Query', clusters: Array<{ __typename?: 'Cluster', id: string, displayName?: string | null, health: string, cordoned: boolean, draining: boolean, lastHeartbeat?: string | null, capacityAt?: string | null, agentVersion?: string | null, controlPlaneMismatch: boolean, capacity: Array<{ __typename?: 'ModelCapacityObj', model: string, totalGpus: number, freeWholeGpus: number }>, pools: Array<{ __typename?: 'NodePool', name: string, nodes: number, totalGpus: number, freeWholeGpus: number }>, nodes: Array<{ __typename?: 'ClusterNode', name: string, healthy: boolean, cordoned: boolean, draining: boolean, rack?: string | null, pool?: string | null, gpus: Array<{ __typename?: 'Gpu', index: number, model: string, memoryMib: number, healthy: boolean, allocatedMilli: number, busyPct?: number | null, memoryUsedMib?: number | null, metricsAt?: string | null }> }> }> };

export type OverviewJobsQueryVariables = Exact<{
  first: Scalars['Int']['input'];
}>;


export type OverviewJobsQuery = { __typename?: 'Query', recent: { __typename?: 'JobConnection', pageInfo: { __typename?: 'PageInfo', hasNextPage: boolean }, nodes: Array<{ __typename?: 'Job', id: string, state: JobState }> }, waiting: { __typename?: 'JobConnection', pageInfo: { __typename?: 'PageInfo', hasNextPage: boolean }, nodes: Array<{ __typename?: 'Job', id: string }> } };

export type RunningJobsQueryVariables = Exact<{
  first: Scalars['Int']['input'];
}>;


export type RunningJobsQuery = { __typename?: 'Query', jobs: { __typename?: 'JobConnection', nodes: Array<{ __typename?: 'Job', id: string, name: string, project: { __typename?: 'Project', slug: string }, replicas: Array<{ __typename?: 'Replica', state: string, clusterId?: string | null, node?: string | null, devices?: unknown | null }> }> } };

export type UsageQueryVariables = Exact<{
  period: PeriodInput;
  groupBy?: InputMaybe<Array<UsageDimension> | UsageDimension>;
  filter?: InputMaybe<UsageFilter>;
}>;


export type UsageQuery = { __typename?: 'Query', usage: { __typename?: 'UsageReport', start: string, end: string, asOf: string, currency: string, rows: Array<{ __typename?: 'UsageRow', project?: string | null, queue?: string | null, cluster?: string | null, gpuModel?: string | null, user?: string | null, day?: string | null, gpuHours: string, effectiveCost: string, listCost: string, gpuHoursValue: number, effectiveCostValue: number, charges: number }> } };

export type ExportUsageMutationVariables = Exact<{
  period: PeriodInput;
  format: ExportFormat;
  tenantId?: InputMaybe<Scalars['ID']['input']>;
}>;


export type ExportUsageMutation = { __typename?: 'Mutation', exportUsage: { __typename?: 'UsageExport', id: string, periodEnd: string, format: ExportFormat, rows: number, bytes: number, sha256: string, downloadUrl: string } };

export type PriceBookQueryVariables = Exact<{ [key: string]: never; }>;


export type PriceBookQuery = { __typename?: 'Query', priceBook: Array<{ __typename?: 'PriceBookEntry', id: string, gpuModel: string, listPricePerGpuHour: string, contractedPricePerGpuHour: string, currency: string, effectiveFrom: string, effectiveTo?: string | null }> };

export type SetPriceMutationVariables = Exact<{
  gpuModel: Scalars['String']['input'];
  list: Scalars['String']['input'];
  contracted?: InputMaybe<Scalars['String']['input']>;
  currency?: InputMaybe<Scalars['String']['input']>;
  from: Scalars['DateTime']['input'];
  to?: InputMaybe<Scalars['DateTime']['input']>;
}>;


export type SetPriceMutation = { __typename?: 'Mutation', setPrice: { __typename?: 'PriceBookEntry', id: string } };

export type ApiTokensQueryVariables = Exact<{ [key: string]: never; }>;


export type ApiTokensQuery = { __typename?: 'Query', apiTokens: Array<{ __typename?: 'ApiToken', id: string, name: string, prefix: string, createdAt: string, expiresAt?: string | null, revokedAt?: string | null, lastUsedAt?: string | null, scopes: Array<TokenScope> }> };

export type CreateApiTokenMutationVariables = Exact<{
  name: Scalars['String']['input'];
  days: Scalars['Int']['input'];
  scopes?: InputMaybe<Array<TokenScope> | TokenScope>;
}>;


export type CreateApiTokenMutation = { __typename?: 'Mutation', createApiToken: { __typename?: 'CreatedApiToken', secret: string, id: string, name: string, expiresAt: string } };

export type RevokeApiTokenMutationVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type RevokeApiTokenMutation = { __typename?: 'Mutation', revokeApiToken: { __typename?: 'ApiToken', id: string, revokedAt?: string | null } };

export type RegisterClusterMutationVariables = Exact<{
  id: Scalars['String']['input'];
  displayName?: InputMaybe<Scalars['String']['input']>;
}>;


export type RegisterClusterMutation = { __typename?: 'Mutation', registerCluster: { __typename?: 'AgentTokenPayload', agentToken: string, helmInstallCommand: string, cluster: { __typename?: 'Cluster', id: string, displayName?: string | null } } };

export type RotateAgentTokenMutationVariables = Exact<{
  clusterId: Scalars['String']['input'];
}>;


export type RotateAgentTokenMutation = { __typename?: 'Mutation', rotateAgentToken: { __typename?: 'AgentTokenPayload', agentToken: string, helmInstallCommand: string, cluster: { __typename?: 'Cluster', id: string, displayName?: string | null } } };

export type ServiceSummaryFieldsFragment = { __typename?: 'Service', id: string, name: string, project: string, queue: string, owner: string, state: ServiceState, condition?: string | null, revision: number, minReplicas: number, maxReplicas: number, desiredReplicas: number, readyReplicas: number, port: number, readinessPath?: string | null, image?: string | null, maxSurge: number, maxUnavailable: number, requestsPerSecond?: number | null, loadReportedAt?: string | null, createdAt: string, updatedAt: string, autoscaling?: { __typename?: 'AutoscalingObj', metric: ScalingMetric, target: number, scaleDownDelaySeconds: number } | null };

export type ServicesQueryVariables = Exact<{
  project?: InputMaybe<Scalars['String']['input']>;
}>;


export type ServicesQuery = { __typename?: 'Query', services: Array<{ __typename?: 'Service', id: string, name: string, project: string, queue: string, owner: string, state: ServiceState, condition?: string | null, revision: number, minReplicas: number, maxReplicas: number, desiredReplicas: number, readyReplicas: number, port: number, readinessPath?: string | null, image?: string | null, maxSurge: number, maxUnavailable: number, requestsPerSecond?: number | null, loadReportedAt?: string | null, createdAt: string, updatedAt: string, autoscaling?: { __typename?: 'AutoscalingObj', metric: ScalingMetric, target: number, scaleDownDelaySeconds: number } | null }> };

export type ServiceQueryVariables = Exact<{
  project: Scalars['String']['input'];
  name: Scalars['String']['input'];
  history: Scalars['Int']['input'];
}>;


export type ServiceQuery = { __typename?: 'Query', project: { __typename?: 'Project', id: string, slug: string, myRole: RoleName }, service: { __typename?: 'Service', id: string, name: string, project: string, queue: string, owner: string, state: ServiceState, condition?: string | null, revision: number, minReplicas: number, maxReplicas: number, desiredReplicas: number, readyReplicas: number, port: number, readinessPath?: string | null, image?: string | null, maxSurge: number, maxUnavailable: number, requestsPerSecond?: number | null, loadReportedAt?: string | null, createdAt: string, updatedAt: string, replicas: Array<{ __typename?: 'Job', id: string, name: string, state: JobState, clusterId?: string | null, spec: unknown, submittedAt: string, updatedAt: string, utilization?: { __typename?: 'JobUtilization', lastBusyPct?: number | null } | null }>, gpuUtilization?: { __typename?: 'ServiceUtilization', busyPct: number, replicas: number } | null, replicasByCluster: Array<{ __typename?: 'ClusterReplicasObj', clusterId?: string | null, replicas: number, ready: number, endpoint?: string | null }>, scalingHistory: Array<{ __typename?: 'ScalingEventObj', at: string, fromReplicas: number, toReplicas: number, signal?: number | null, reason: string }>, revisions: Array<{ __typename?: 'ServiceRevisionObj', revision: number, createdAt: string, image?: string | null }>, autoscaling?: { __typename?: 'AutoscalingObj', metric: ScalingMetric, target: number, scaleDownDelaySeconds: number } | null } };

export type ApplyServiceMutationVariables = Exact<{
  input: ServiceInput;
}>;


export type ApplyServiceMutation = { __typename?: 'Mutation', applyService: { __typename?: 'ApplyServicePayload', applied: ServiceApplied, service: { __typename?: 'Service', id: string, name: string, project: string, queue: string, owner: string, state: ServiceState, condition?: string | null, revision: number, minReplicas: number, maxReplicas: number, desiredReplicas: number, readyReplicas: number, port: number, readinessPath?: string | null, image?: string | null, maxSurge: number, maxUnavailable: number, requestsPerSecond?: number | null, loadReportedAt?: string | null, createdAt: string, updatedAt: string, autoscaling?: { __typename?: 'AutoscalingObj', metric: ScalingMetric, target: number, scaleDownDelaySeconds: number } | null } } };

export type ScaleServiceMutationVariables = Exact<{
  project: Scalars['String']['input'];
  name: Scalars['String']['input'];
  replicas?: InputMaybe<Scalars['Int']['input']>;
  minReplicas?: InputMaybe<Scalars['Int']['input']>;
  maxReplicas?: InputMaybe<Scalars['Int']['input']>;
}>;


export type ScaleServiceMutation = { __typename?: 'Mutation', scaleService: { __typename?: 'Service', id: string, name: string, project: string, queue: string, owner: string, state: ServiceState, condition?: string | null, revision: number, minReplicas: number, maxReplicas: number, desiredReplicas: number, readyReplicas: number, port: number, readinessPath?: string | null, image?: string | null, maxSurge: number, maxUnavailable: number, requestsPerSecond?: number | null, loadReportedAt?: string | null, createdAt: string, updatedAt: string, autoscaling?: { __typename?: 'AutoscalingObj', metric: ScalingMetric, target: number, scaleDownDelaySeconds: number } | null } };

export type SetServiceLoadMutationVariables = Exact<{
  project: Scalars['String']['input'];
  name: Scalars['String']['input'];
  requestsPerSecond: Scalars['Float']['input'];
}>;


export type SetServiceLoadMutation = { __typename?: 'Mutation', setServiceLoad: { __typename?: 'Service', id: string, name: string, project: string, queue: string, owner: string, state: ServiceState, condition?: string | null, revision: number, minReplicas: number, maxReplicas: number, desiredReplicas: number, readyReplicas: number, port: number, readinessPath?: string | null, image?: string | null, maxSurge: number, maxUnavailable: number, requestsPerSecond?: number | null, loadReportedAt?: string | null, createdAt: string, updatedAt: string, autoscaling?: { __typename?: 'AutoscalingObj', metric: ScalingMetric, target: number, scaleDownDelaySeconds: number } | null } };

export type DeleteServiceMutationVariables = Exact<{
  project: Scalars['String']['input'];
  name: Scalars['String']['input'];
}>;


export type DeleteServiceMutation = { __typename?: 'Mutation', deleteService: { __typename?: 'Service', id: string, name: string, project: string, state: ServiceState } };

export type MetricPointFieldsFragment = { __typename?: 'MetricPoint', at: string, samples: number, busyPctAvg?: number | null, busyPctMax?: number | null, memoryUsedMibAvg?: number | null, memoryUsedMibMax?: number | null, usageSamples: number, cpuCoresAvg?: number | null, cpuCoresMax?: number | null, memoryMibAvg?: number | null, memoryMibMax?: number | null, diskReadBpsAvg?: number | null, diskWriteBpsAvg?: number | null, netRxBpsAvg?: number | null, netTxBpsAvg?: number | null };

export type JobMetricHistoryQueryVariables = Exact<{
  id: Scalars['ID']['input'];
  since: Scalars['DateTime']['input'];
}>;


export type JobMetricHistoryQuery = { __typename?: 'Query', job: { __typename?: 'Job', id: string, metricHistory: { __typename?: 'MetricHistory', resolutionSeconds: number, points: Array<{ __typename?: 'MetricPoint', at: string, samples: number, busyPctAvg?: number | null, busyPctMax?: number | null, memoryUsedMibAvg?: number | null, memoryUsedMibMax?: number | null, usageSamples: number, cpuCoresAvg?: number | null, cpuCoresMax?: number | null, memoryMibAvg?: number | null, memoryMibMax?: number | null, diskReadBpsAvg?: number | null, diskWriteBpsAvg?: number | null, netRxBpsAvg?: number | null, netTxBpsAvg?: number | null }> } } };

export type ClusterMetricHistoryQueryVariables = Exact<{
  id: Scalars['String']['input'];
  since: Scalars['DateTime']['input'];
}>;


export type ClusterMetricHistoryQuery = { __typename?: 'Query', cluster: { __typename?: 'Cluster', id: string, metricHistory: { __typename?: 'MetricHistory', resolutionSeconds: number, points: Array<{ __typename?: 'MetricPoint', at: string, samples: number, busyPctAvg?: number | null, busyPctMax?: number | null, memoryUsedMibAvg?: number | null, memoryUsedMibMax?: number | null, usageSamples: number, cpuCoresAvg?: number | null, cpuCoresMax?: number | null, memoryMibAvg?: number | null, memoryMibMax?: number | null, diskReadBpsAvg?: number | null, diskWriteBpsAvg?: number | null, netRxBpsAvg?: number | null, netTxBpsAvg?: number | null }> } } };

export type JobCostQueryVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type JobCostQuery = { __typename?: 'Query', job: { __typename?: 'Job', id: string, cost?: { __typename?: 'WorkloadCost', currency: string, effectiveCostValue: number, gpuHoursValue: number } | null } };

export type ServiceCostQueryVariables = Exact<{
  project: Scalars['String']['input'];
  name: Scalars['String']['input'];
}>;


export type ServiceCostQuery = { __typename?: 'Query', service: { __typename?: 'Service', id: string, cost?: { __typename?: 'WorkloadCost', currency: string, effectiveCostValue: number, gpuHoursValue: number } | null } };

export type JobLogsQueryVariables = Exact<{
  jobId: Scalars['ID']['input'];
  task?: InputMaybe<Scalars['String']['input']>;
  replica?: InputMaybe<Scalars['Int']['input']>;
  tail?: InputMaybe<Scalars['Int']['input']>;
}>;


export type JobLogsQuery = { __typename?: 'Query', jobLogs: { __typename?: 'LogPage', task: string, replica: number, clusterId?: string | null, source: LogSource, truncated: boolean, ended: boolean, cursor?: string | null, lines: Array<{ __typename?: 'LogLine', at: string, stream: LogStream, text: string }> } };

export type FollowJobLogsSubscriptionVariables = Exact<{
  jobId: Scalars['ID']['input'];
  task?: InputMaybe<Scalars['String']['input']>;
  replica?: InputMaybe<Scalars['Int']['input']>;
  tail: Scalars['Int']['input'];
}>;


export type FollowJobLogsSubscription = { __typename?: 'Subscription', followJobLogs: { __typename?: 'LogPage', source: LogSource, truncated: boolean, ended: boolean, lines: Array<{ __typename?: 'LogLine', at: string, stream: LogStream, text: string }> } };

export type BudgetFieldsFragment = { __typename?: 'Budget', unit: BudgetUnit, unitLabel: string, amount: string, amountValue: number, softPercent: number, hard: boolean, suspendBorrowed: boolean, periodStart: string, periodEnd: string, spentValue: number, committedValue: number, status: BudgetStatus, updatedAt: string, burnDown: Array<{ __typename?: 'BudgetDay', day: string, spent: number }> };

export type SetBudgetMutationVariables = Exact<{
  projectId?: InputMaybe<Scalars['ID']['input']>;
  tenantId?: InputMaybe<Scalars['ID']['input']>;
  unit: BudgetUnit;
  amount: Scalars['String']['input'];
  softPercent: Scalars['Int']['input'];
  hard: Scalars['Boolean']['input'];
  suspendBorrowed: Scalars['Boolean']['input'];
}>;


export type SetBudgetMutation = { __typename?: 'Mutation', setBudget: { __typename?: 'Budget', unit: BudgetUnit, unitLabel: string, amount: string, amountValue: number, softPercent: number, hard: boolean, suspendBorrowed: boolean, periodStart: string, periodEnd: string, spentValue: number, committedValue: number, status: BudgetStatus, updatedAt: string, burnDown: Array<{ __typename?: 'BudgetDay', day: string, spent: number }> } };

export type RemoveBudgetMutationVariables = Exact<{
  projectId?: InputMaybe<Scalars['ID']['input']>;
  tenantId?: InputMaybe<Scalars['ID']['input']>;
}>;


export type RemoveBudgetMutation = { __typename?: 'Mutation', removeBudget: boolean };

export type CordonClusterMutationVariables = Exact<{
  id: Scalars['String']['input'];
}>;


export type CordonClusterMutation = { __typename?: 'Mutation', cordonCluster: { __typename?: 'Cluster', id: string, displayName?: string | null, health: string, cordoned: boolean, draining: boolean, lastHeartbeat?: string | null, capacityAt?: string | null, agentVersion?: string | null, controlPlaneMismatch: boolean, capacity: Array<{ __typename?: 'ModelCapacityObj', model: string, totalGpus: number, freeWholeGpus: number }>, pools: Array<{ __typename?: 'NodePool', name: string, nodes: number, totalGpus: number, freeWholeGpus: number }>, nodes: Array<{ __typename?: 'ClusterNode', name: string, healthy: boolean, cordoned: boolean, draining: boolean, rack?: string | null, pool?: string | null, gpus: Array<{ __typename?: 'Gpu', index: number, model: string, memoryMib: number, healthy: boolean, allocatedMilli: number, busyPct?: number | null, memoryUsedMib?: number | null, metricsAt?: string | null }> }> } };

export type DrainClusterMutationVariables = Exact<{
  id: Scalars['String']['input'];
  graceSeconds: Scalars['Int']['input'];
}>;


export type DrainClusterMutation = { __typename?: 'Mutation', drainCluster: { __typename?: 'Cluster', id: string, displayName?: string | null, health: string, cordoned: boolean, draining: boolean, lastHeartbeat?: string | null, capacityAt?: string | null, agentVersion?: string | null, controlPlaneMismatch: boolean, capacity: Array<{ __typename?: 'ModelCapacityObj', model: string, totalGpus: number, freeWholeGpus: number }>, pools: Array<{ __typename?: 'NodePool', name: string, nodes: number, totalGpus: number, freeWholeGpus: number }>, nodes: Array<{ __typename?: 'ClusterNode', name: string, healthy: boolean, cordoned: boolean, draining: boolean, rack?: string | null, pool?: string | null, gpus: Array<{ __typename?: 'Gpu', index: number, model: string, memoryMib: number, healthy: boolean, allocatedMilli: number, busyPct?: number | null, memoryUsedMib?: number | null, metricsAt?: string | null }> }> } };

export type UncordonClusterMutationVariables = Exact<{
  id: Scalars['String']['input'];
}>;


export type UncordonClusterMutation = { __typename?: 'Mutation', uncordonCluster: { __typename?: 'Cluster', id: string, displayName?: string | null, health: string, cordoned: boolean, draining: boolean, lastHeartbeat?: string | null, capacityAt?: string | null, agentVersion?: string | null, controlPlaneMismatch: boolean, capacity: Array<{ __typename?: 'ModelCapacityObj', model: string, totalGpus: number, freeWholeGpus: number }>, pools: Array<{ __typename?: 'NodePool', name: string, nodes: number, totalGpus: number, freeWholeGpus: number }>, nodes: Array<{ __typename?: 'ClusterNode', name: string, healthy: boolean, cordoned: boolean, draining: boolean, rack?: string | null, pool?: string | null, gpus: Array<{ __typename?: 'Gpu', index: number, model: string, memoryMib: number, healthy: boolean, allocatedMilli: number, busyPct?: number | null, memoryUsedMib?: number | null, metricsAt?: string | null }> }> } };

export type RetireClusterMutationVariables = Exact<{
  id: Scalars['String']['input'];
}>;


export type RetireClusterMutation = { __typename?: 'Mutation', retireCluster: { __typename?: 'Cluster', id: string, retiredAt?: string | null } };

export type CordonNodeMutationVariables = Exact<{
  clusterId: Scalars['String']['input'];
  node: Scalars['String']['input'];
}>;


export type CordonNodeMutation = { __typename?: 'Mutation', cordonNode: { __typename?: 'Cluster', id: string, displayName?: string | null, health: string, cordoned: boolean, draining: boolean, lastHeartbeat?: string | null, capacityAt?: string | null, agentVersion?: string | null, controlPlaneMismatch: boolean, capacity: Array<{ __typename?: 'ModelCapacityObj', model: string, totalGpus: number, freeWholeGpus: number }>, pools: Array<{ __typename?: 'NodePool', name: string, nodes: number, totalGpus: number, freeWholeGpus: number }>, nodes: Array<{ __typename?: 'ClusterNode', name: string, healthy: boolean, cordoned: boolean, draining: boolean, rack?: string | null, pool?: string | null, gpus: Array<{ __typename?: 'Gpu', index: number, model: string, memoryMib: number, healthy: boolean, allocatedMilli: number, busyPct?: number | null, memoryUsedMib?: number | null, metricsAt?: string | null }> }> } };

export type DrainNodeMutationVariables = Exact<{
  clusterId: Scalars['String']['input'];
  node: Scalars['String']['input'];
  graceSeconds: Scalars['Int']['input'];
}>;


export type DrainNodeMutation = { __typename?: 'Mutation', drainNode: { __typename?: 'Cluster', id: string, displayName?: string | null, health: string, cordoned: boolean, draining: boolean, lastHeartbeat?: string | null, capacityAt?: string | null, agentVersion?: string | null, controlPlaneMismatch: boolean, capacity: Array<{ __typename?: 'ModelCapacityObj', model: string, totalGpus: number, freeWholeGpus: number }>, pools: Array<{ __typename?: 'NodePool', name: string, nodes: number, totalGpus: number, freeWholeGpus: number }>, nodes: Array<{ __typename?: 'ClusterNode', name: string, healthy: boolean, cordoned: boolean, draining: boolean, rack?: string | null, pool?: string | null, gpus: Array<{ __typename?: 'Gpu', index: number, model: string, memoryMib: number, healthy: boolean, allocatedMilli: number, busyPct?: number | null, memoryUsedMib?: number | null, metricsAt?: string | null }> }> } };

export type UncordonNodeMutationVariables = Exact<{
  clusterId: Scalars['String']['input'];
  node: Scalars['String']['input'];
}>;


export type UncordonNodeMutation = { __typename?: 'Mutation', uncordonNode: { __typename?: 'Cluster', id: string, displayName?: string | null, health: string, cordoned: boolean, draining: boolean, lastHeartbeat?: string | null, capacityAt?: string | null, agentVersion?: string | null, controlPlaneMismatch: boolean, capacity: Array<{ __typename?: 'ModelCapacityObj', model: string, totalGpus: number, freeWholeGpus: number }>, pools: Array<{ __typename?: 'NodePool', name: string, nodes: number, totalGpus: number, freeWholeGpus: number }>, nodes: Array<{ __typename?: 'ClusterNode', name: string, healthy: boolean, cordoned: boolean, draining: boolean, rack?: string | null, pool?: string | null, gpus: Array<{ __typename?: 'Gpu', index: number, model: string, memoryMib: number, healthy: boolean, allocatedMilli: number, busyPct?: number | null, memoryUsedMib?: number | null, metricsAt?: string | null }> }> } };

export type DeleteQueueMutationVariables = Exact<{
  queueId: Scalars['ID']['input'];
}>;


export type DeleteQueueMutation = { __typename?: 'Mutation', deleteQueue: boolean };

export type DeleteProjectMutationVariables = Exact<{
  projectId: Scalars['ID']['input'];
}>;


export type DeleteProjectMutation = { __typename?: 'Mutation', deleteProject: { __typename?: 'Project', id: string, slug: string } };

export type AuditEventsQueryVariables = Exact<{
  clusterId?: InputMaybe<Scalars['String']['input']>;
  first: Scalars['Int']['input'];
}>;


export type AuditEventsQuery = { __typename?: 'Query', auditEvents: Array<{ __typename?: 'AuditEvent', id: string, at: string, actor: string, action: string, target: string, detail: string }> };

export type WaitingJobsQueryVariables = Exact<{
  filter?: InputMaybe<JobsFilter>;
  first: Scalars['Int']['input'];
  after?: InputMaybe<Scalars['String']['input']>;
}>;


export type WaitingJobsQuery = { __typename?: 'Query', jobs: { __typename?: 'JobConnection', pageInfo: { __typename?: 'PageInfo', hasNextPage: boolean, endCursor?: string | null }, nodes: Array<{ __typename?: 'Job', id: string, name: string, state: JobState, priorityClass: string, projectSlug: string, queueName: string, ownerSubject: string, submittedAt: string, queuePosition?: number | null, workloadType: WorkloadType }> } };

export type TenantBudgetsQueryVariables = Exact<{ [key: string]: never; }>;


export type TenantBudgetsQuery = { __typename?: 'Query', tenants: Array<{ __typename?: 'Tenant', id: string, slug: string, name: string, budget?: { __typename?: 'Budget', unit: BudgetUnit, unitLabel: string, amount: string, amountValue: number, softPercent: number, hard: boolean, suspendBorrowed: boolean, periodStart: string, periodEnd: string, spentValue: number, committedValue: number, status: BudgetStatus, updatedAt: string, burnDown: Array<{ __typename?: 'BudgetDay', day: string, spent: number }> } | null }> };

export const QueueFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"QueueFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Queue"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"canBorrow"}},{"kind":"Field","name":{"kind":"Name","value":"maxWaitSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"defaultRuntimeSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"maxRuntimeSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"suspendBorrowedDuring"}},{"kind":"Field","name":{"kind":"Name","value":"interactiveReserveGpus"}},{"kind":"Field","name":{"kind":"Name","value":"fairShare"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"fairGpus"}},{"kind":"Field","name":{"kind":"Name","value":"heldGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"poolWeights"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}}]}},{"kind":"Field","name":{"kind":"Name","value":"quotas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"guaranteed"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<QueueFieldsFragment, unknown>;
export const TenantRightsFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"TenantRightsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"TenantRights"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"maxPriorityClass"}},{"kind":"Field","name":{"kind":"Name","value":"mayPreempt"}},{"kind":"Field","name":{"kind":"Name","value":"reclaimFromAny"}},{"kind":"Field","name":{"kind":"Name","value":"reclaimFrom"}}]}}]} as unknown as DocumentNode<TenantRightsFieldsFragment, unknown>;
export const ShareFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ShareFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"ShareSettings"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"guarantees"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}},{"kind":"Field","name":{"kind":"Name","value":"limits"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<ShareFieldsFragment, unknown>;
export const ClusterFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ClusterFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Cluster"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeat"}},{"kind":"Field","name":{"kind":"Name","value":"capacityAt"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"controlPlaneMismatch"}},{"kind":"Field","name":{"kind":"Name","value":"capacity"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"rack"}},{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"allocatedMilli"}},{"kind":"Field","name":{"kind":"Name","value":"busyPct"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"metricsAt"}}]}}]}}]}}]} as unknown as DocumentNode<ClusterFieldsFragment, unknown>;
export const ServiceSummaryFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ServiceSummaryFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Service"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"project"}},{"kind":"Field","name":{"kind":"Name","value":"queue"}},{"kind":"Field","name":{"kind":"Name","value":"owner"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"condition"}},{"kind":"Field","name":{"kind":"Name","value":"revision"}},{"kind":"Field","name":{"kind":"Name","value":"minReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"maxReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"desiredReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"readyReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"port"}},{"kind":"Field","name":{"kind":"Name","value":"readinessPath"}},{"kind":"Field","name":{"kind":"Name","value":"image"}},{"kind":"Field","name":{"kind":"Name","value":"autoscaling"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"metric"}},{"kind":"Field","name":{"kind":"Name","value":"target"}},{"kind":"Field","name":{"kind":"Name","value":"scaleDownDelaySeconds"}}]}},{"kind":"Field","name":{"kind":"Name","value":"maxSurge"}},{"kind":"Field","name":{"kind":"Name","value":"maxUnavailable"}},{"kind":"Field","name":{"kind":"Name","value":"requestsPerSecond"}},{"kind":"Field","name":{"kind":"Name","value":"loadReportedAt"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<ServiceSummaryFieldsFragment, unknown>;
export const MetricPointFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"MetricPointFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MetricPoint"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"samples"}},{"kind":"Field","name":{"kind":"Name","value":"busyPctAvg"}},{"kind":"Field","name":{"kind":"Name","value":"busyPctMax"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMibAvg"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMibMax"}},{"kind":"Field","name":{"kind":"Name","value":"usageSamples"}},{"kind":"Field","name":{"kind":"Name","value":"cpuCoresAvg"}},{"kind":"Field","name":{"kind":"Name","value":"cpuCoresMax"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMibAvg"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMibMax"}},{"kind":"Field","name":{"kind":"Name","value":"diskReadBpsAvg"}},{"kind":"Field","name":{"kind":"Name","value":"diskWriteBpsAvg"}},{"kind":"Field","name":{"kind":"Name","value":"netRxBpsAvg"}},{"kind":"Field","name":{"kind":"Name","value":"netTxBpsAvg"}}]}}]} as unknown as DocumentNode<MetricPointFieldsFragment, unknown>;
export const BudgetFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"BudgetFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Budget"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"unit"}},{"kind":"Field","name":{"kind":"Name","value":"unitLabel"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"amountValue"}},{"kind":"Field","name":{"kind":"Name","value":"softPercent"}},{"kind":"Field","name":{"kind":"Name","value":"hard"}},{"kind":"Field","name":{"kind":"Name","value":"suspendBorrowed"}},{"kind":"Field","name":{"kind":"Name","value":"periodStart"}},{"kind":"Field","name":{"kind":"Name","value":"periodEnd"}},{"kind":"Field","name":{"kind":"Name","value":"spentValue"}},{"kind":"Field","name":{"kind":"Name","value":"committedValue"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"burnDown"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"day"}},{"kind":"Field","name":{"kind":"Name","value":"spent"}}]}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<BudgetFieldsFragment, unknown>;
export const MeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Me"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"me"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"subject"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"platformAdmin"}}]}}]}}]} as unknown as DocumentNode<MeQuery, MeQueryVariables>;
export const ProjectsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Projects"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"projects"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"tenantId"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"myRole"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"queues"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"QueueFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"QueueFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Queue"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"canBorrow"}},{"kind":"Field","name":{"kind":"Name","value":"maxWaitSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"defaultRuntimeSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"maxRuntimeSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"suspendBorrowedDuring"}},{"kind":"Field","name":{"kind":"Name","value":"interactiveReserveGpus"}},{"kind":"Field","name":{"kind":"Name","value":"fairShare"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"fairGpus"}},{"kind":"Field","name":{"kind":"Name","value":"heldGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"poolWeights"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}}]}},{"kind":"Field","name":{"kind":"Name","value":"quotas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"guaranteed"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<ProjectsQuery, ProjectsQueryVariables>;
export const ProjectDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Project"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"slug"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"project"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"slug"},"value":{"kind":"Variable","name":{"kind":"Name","value":"slug"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"tenantId"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"myRole"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"share"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ShareFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"budget"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"BudgetFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"queues"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"QueueFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"members"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"role"}},{"kind":"Field","name":{"kind":"Name","value":"user"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"subject"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}}]}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ShareFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"ShareSettings"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"guarantees"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}},{"kind":"Field","name":{"kind":"Name","value":"limits"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"BudgetFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Budget"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"unit"}},{"kind":"Field","name":{"kind":"Name","value":"unitLabel"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"amountValue"}},{"kind":"Field","name":{"kind":"Name","value":"softPercent"}},{"kind":"Field","name":{"kind":"Name","value":"hard"}},{"kind":"Field","name":{"kind":"Name","value":"suspendBorrowed"}},{"kind":"Field","name":{"kind":"Name","value":"periodStart"}},{"kind":"Field","name":{"kind":"Name","value":"periodEnd"}},{"kind":"Field","name":{"kind":"Name","value":"spentValue"}},{"kind":"Field","name":{"kind":"Name","value":"committedValue"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"burnDown"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"day"}},{"kind":"Field","name":{"kind":"Name","value":"spent"}}]}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"QueueFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Queue"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"canBorrow"}},{"kind":"Field","name":{"kind":"Name","value":"maxWaitSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"defaultRuntimeSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"maxRuntimeSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"suspendBorrowedDuring"}},{"kind":"Field","name":{"kind":"Name","value":"interactiveReserveGpus"}},{"kind":"Field","name":{"kind":"Name","value":"fairShare"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"fairGpus"}},{"kind":"Field","name":{"kind":"Name","value":"heldGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"poolWeights"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}}]}},{"kind":"Field","name":{"kind":"Name","value":"quotas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"guaranteed"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<ProjectQuery, ProjectQueryVariables>;
export const ProjectJobsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ProjectJobs"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"slug"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"JobFilterInput"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"project"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"slug"},"value":{"kind":"Variable","name":{"kind":"Name","value":"slug"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"myRole"}},{"kind":"Field","name":{"kind":"Name","value":"queues"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"jobs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"projectId"}},{"kind":"Field","name":{"kind":"Name","value":"queueId"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"priorityClass"}},{"kind":"Field","name":{"kind":"Name","value":"preemptible"}},{"kind":"Field","name":{"kind":"Name","value":"borrowed"}},{"kind":"Field","name":{"kind":"Name","value":"submittedBy"}},{"kind":"Field","name":{"kind":"Name","value":"submitter"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"subject"}}]}},{"kind":"Field","name":{"kind":"Name","value":"submittedAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"tasks"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"replicaCount"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<ProjectJobsQuery, ProjectJobsQueryVariables>;
export const JobDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Job"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"job"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"projectId"}},{"kind":"Field","name":{"kind":"Name","value":"queueId"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"priorityClass"}},{"kind":"Field","name":{"kind":"Name","value":"preemptible"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"borrowed"}},{"kind":"Field","name":{"kind":"Name","value":"submittedBy"}},{"kind":"Field","name":{"kind":"Name","value":"submitter"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"subject"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}}]}},{"kind":"Field","name":{"kind":"Name","value":"submittedAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"epoch"}},{"kind":"Field","name":{"kind":"Name","value":"workloadType"}},{"kind":"Field","name":{"kind":"Name","value":"endpoint"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"estimatedStart"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"jobsAhead"}}]}},{"kind":"Field","name":{"kind":"Name","value":"predictedRuntime"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"p50Seconds"}},{"kind":"Field","name":{"kind":"Name","value":"p90Seconds"}},{"kind":"Field","name":{"kind":"Name","value":"samples"}},{"kind":"Field","name":{"kind":"Name","value":"basis"}}]}},{"kind":"Field","name":{"kind":"Name","value":"projectSlug"}},{"kind":"Field","name":{"kind":"Name","value":"queueName"}},{"kind":"Field","name":{"kind":"Name","value":"workspace"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"port"}},{"kind":"Field","name":{"kind":"Name","value":"idleTimeoutSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"idleAction"}}]}},{"kind":"Field","name":{"kind":"Name","value":"spec"}},{"kind":"Field","name":{"kind":"Name","value":"whyPending"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"summary"}},{"kind":"Field","name":{"kind":"Name","value":"reasons"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cluster"}},{"kind":"Field","name":{"kind":"Name","value":"stage"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"tasks"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"replicaCount"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"spec"}}]}},{"kind":"Field","name":{"kind":"Name","value":"replicas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"taskId"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"node"}},{"kind":"Field","name":{"kind":"Name","value":"devices"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"epoch"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"exitCode"}},{"kind":"Field","name":{"kind":"Name","value":"termination"}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cpuCores"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"diskReadBps"}},{"kind":"Field","name":{"kind":"Name","value":"diskWriteBps"}},{"kind":"Field","name":{"kind":"Name","value":"netRxBps"}},{"kind":"Field","name":{"kind":"Name","value":"netTxBps"}},{"kind":"Field","name":{"kind":"Name","value":"at"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"utilization"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"samples"}},{"kind":"Field","name":{"kind":"Name","value":"avgBusyPct"}},{"kind":"Field","name":{"kind":"Name","value":"maxBusyPct"}},{"kind":"Field","name":{"kind":"Name","value":"lastBusyPct"}},{"kind":"Field","name":{"kind":"Name","value":"avgMemoryUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"maxMemoryUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"usageSamples"}},{"kind":"Field","name":{"kind":"Name","value":"avgCpuCores"}},{"kind":"Field","name":{"kind":"Name","value":"maxCpuCores"}},{"kind":"Field","name":{"kind":"Name","value":"avgMemoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"maxMemoryMib"}}]}},{"kind":"Field","name":{"kind":"Name","value":"dispatches"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"epoch"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"dispatchedAt"}},{"kind":"Field","name":{"kind":"Name","value":"acknowledgedAt"}},{"kind":"Field","name":{"kind":"Name","value":"outcome"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}}]}},{"kind":"Field","name":{"kind":"Name","value":"events"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"taskId"}},{"kind":"Field","name":{"kind":"Name","value":"replicaId"}},{"kind":"Field","name":{"kind":"Name","value":"fromState"}},{"kind":"Field","name":{"kind":"Name","value":"toState"}},{"kind":"Field","name":{"kind":"Name","value":"cause"}},{"kind":"Field","name":{"kind":"Name","value":"actor"}},{"kind":"Field","name":{"kind":"Name","value":"actorName"}},{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"epoch"}}]}}]}}]}}]} as unknown as DocumentNode<JobQuery, JobQueryVariables>;
export const TenantsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Tenants"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"tenants"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"myRole"}},{"kind":"Field","name":{"kind":"Name","value":"rights"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"TenantRightsFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"share"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ShareFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"TenantRightsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"TenantRights"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"maxPriorityClass"}},{"kind":"Field","name":{"kind":"Name","value":"mayPreempt"}},{"kind":"Field","name":{"kind":"Name","value":"reclaimFromAny"}},{"kind":"Field","name":{"kind":"Name","value":"reclaimFrom"}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ShareFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"ShareSettings"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"guarantees"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}},{"kind":"Field","name":{"kind":"Name","value":"limits"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<TenantsQuery, TenantsQueryVariables>;
export const SetTenantShareDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetTenantShare"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"weight"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Float"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"guarantees"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ResourceAmountInput"}}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limits"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ResourceAmountInput"}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setTenantShare"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"tenantId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}}},{"kind":"Argument","name":{"kind":"Name","value":"weight"},"value":{"kind":"Variable","name":{"kind":"Name","value":"weight"}}},{"kind":"Argument","name":{"kind":"Name","value":"guarantees"},"value":{"kind":"Variable","name":{"kind":"Name","value":"guarantees"}}},{"kind":"Argument","name":{"kind":"Name","value":"limits"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limits"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"share"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ShareFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ShareFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"ShareSettings"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"guarantees"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}},{"kind":"Field","name":{"kind":"Name","value":"limits"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<SetTenantShareMutation, SetTenantShareMutationVariables>;
export const SetProjectShareDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetProjectShare"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"weight"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Float"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"guarantees"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ResourceAmountInput"}}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limits"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ResourceAmountInput"}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setProjectShare"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"projectId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}}},{"kind":"Argument","name":{"kind":"Name","value":"weight"},"value":{"kind":"Variable","name":{"kind":"Name","value":"weight"}}},{"kind":"Argument","name":{"kind":"Name","value":"guarantees"},"value":{"kind":"Variable","name":{"kind":"Name","value":"guarantees"}}},{"kind":"Argument","name":{"kind":"Name","value":"limits"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limits"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"share"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ShareFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ShareFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"ShareSettings"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"guarantees"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}},{"kind":"Field","name":{"kind":"Name","value":"limits"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<SetProjectShareMutation, SetProjectShareMutationVariables>;
export const SetTenantRightsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetTenantRights"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"maxPriorityClass"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"mayPreempt"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"reclaimFromAny"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"reclaimFrom"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setTenantRights"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"tenantId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}}},{"kind":"Argument","name":{"kind":"Name","value":"maxPriorityClass"},"value":{"kind":"Variable","name":{"kind":"Name","value":"maxPriorityClass"}}},{"kind":"Argument","name":{"kind":"Name","value":"mayPreempt"},"value":{"kind":"Variable","name":{"kind":"Name","value":"mayPreempt"}}},{"kind":"Argument","name":{"kind":"Name","value":"reclaimFromAny"},"value":{"kind":"Variable","name":{"kind":"Name","value":"reclaimFromAny"}}},{"kind":"Argument","name":{"kind":"Name","value":"reclaimFrom"},"value":{"kind":"Variable","name":{"kind":"Name","value":"reclaimFrom"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"rights"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"TenantRightsFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"TenantRightsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"TenantRights"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"maxPriorityClass"}},{"kind":"Field","name":{"kind":"Name","value":"mayPreempt"}},{"kind":"Field","name":{"kind":"Name","value":"reclaimFromAny"}},{"kind":"Field","name":{"kind":"Name","value":"reclaimFrom"}}]}}]} as unknown as DocumentNode<SetTenantRightsMutation, SetTenantRightsMutationVariables>;
export const SubmitJobDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SubmitJob"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"JobInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"submitJob"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"borrowed"}},{"kind":"Field","name":{"kind":"Name","value":"budgetWarning"}},{"kind":"Field","name":{"kind":"Name","value":"job"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}}]}}]}}]} as unknown as DocumentNode<SubmitJobMutation, SubmitJobMutationVariables>;
export const CancelJobDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CancelJob"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cancelJob"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]}}]} as unknown as DocumentNode<CancelJobMutation, CancelJobMutationVariables>;
export const SuspendJobDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SuspendJob"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"suspendJob"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]}}]} as unknown as DocumentNode<SuspendJobMutation, SuspendJobMutationVariables>;
export const ResumeJobDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ResumeJob"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resumeJob"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]}}]} as unknown as DocumentNode<ResumeJobMutation, ResumeJobMutationVariables>;
export const CreateTenantDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateTenant"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"slug"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createTenant"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"slug"},"value":{"kind":"Variable","name":{"kind":"Name","value":"slug"}}},{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"rights"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"TenantRightsFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"TenantRightsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"TenantRights"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"maxPriorityClass"}},{"kind":"Field","name":{"kind":"Name","value":"mayPreempt"}},{"kind":"Field","name":{"kind":"Name","value":"reclaimFromAny"}},{"kind":"Field","name":{"kind":"Name","value":"reclaimFrom"}}]}}]} as unknown as DocumentNode<CreateTenantMutation, CreateTenantMutationVariables>;
export const CreateProjectDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateProject"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"slug"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createProject"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"tenantId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}}},{"kind":"Argument","name":{"kind":"Name","value":"slug"},"value":{"kind":"Variable","name":{"kind":"Name","value":"slug"}}},{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<CreateProjectMutation, CreateProjectMutationVariables>;
export const AddMemberDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AddMember"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"subject"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"role"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ProjectRole"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"addMember"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"projectId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}}},{"kind":"Argument","name":{"kind":"Name","value":"subject"},"value":{"kind":"Variable","name":{"kind":"Name","value":"subject"}}},{"kind":"Argument","name":{"kind":"Name","value":"role"},"value":{"kind":"Variable","name":{"kind":"Name","value":"role"}}}]}]}}]} as unknown as DocumentNode<AddMemberMutation, AddMemberMutationVariables>;
export const CreateQueueDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateQueue"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"weight"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Float"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"canBorrow"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createQueue"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"projectId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}}},{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}},{"kind":"Argument","name":{"kind":"Name","value":"weight"},"value":{"kind":"Variable","name":{"kind":"Name","value":"weight"}}},{"kind":"Argument","name":{"kind":"Name","value":"canBorrow"},"value":{"kind":"Variable","name":{"kind":"Name","value":"canBorrow"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"QueueFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"QueueFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Queue"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"canBorrow"}},{"kind":"Field","name":{"kind":"Name","value":"maxWaitSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"defaultRuntimeSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"maxRuntimeSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"suspendBorrowedDuring"}},{"kind":"Field","name":{"kind":"Name","value":"interactiveReserveGpus"}},{"kind":"Field","name":{"kind":"Name","value":"fairShare"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"fairGpus"}},{"kind":"Field","name":{"kind":"Name","value":"heldGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"poolWeights"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}}]}},{"kind":"Field","name":{"kind":"Name","value":"quotas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"guaranteed"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<CreateQueueMutation, CreateQueueMutationVariables>;
export const UpdateQueueDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateQueue"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"queueId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"maxWaitSeconds"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"defaultRuntimeSeconds"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"maxRuntimeSeconds"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"suspendBorrowedDuring"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"poolWeights"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"PoolWeightInput"}}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"interactiveReserveGpus"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Float"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateQueue"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"queueId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"queueId"}}},{"kind":"Argument","name":{"kind":"Name","value":"maxWaitSeconds"},"value":{"kind":"Variable","name":{"kind":"Name","value":"maxWaitSeconds"}}},{"kind":"Argument","name":{"kind":"Name","value":"defaultRuntimeSeconds"},"value":{"kind":"Variable","name":{"kind":"Name","value":"defaultRuntimeSeconds"}}},{"kind":"Argument","name":{"kind":"Name","value":"maxRuntimeSeconds"},"value":{"kind":"Variable","name":{"kind":"Name","value":"maxRuntimeSeconds"}}},{"kind":"Argument","name":{"kind":"Name","value":"suspendBorrowedDuring"},"value":{"kind":"Variable","name":{"kind":"Name","value":"suspendBorrowedDuring"}}},{"kind":"Argument","name":{"kind":"Name","value":"poolWeights"},"value":{"kind":"Variable","name":{"kind":"Name","value":"poolWeights"}}},{"kind":"Argument","name":{"kind":"Name","value":"interactiveReserveGpus"},"value":{"kind":"Variable","name":{"kind":"Name","value":"interactiveReserveGpus"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"QueueFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"QueueFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Queue"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"canBorrow"}},{"kind":"Field","name":{"kind":"Name","value":"maxWaitSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"defaultRuntimeSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"maxRuntimeSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"suspendBorrowedDuring"}},{"kind":"Field","name":{"kind":"Name","value":"interactiveReserveGpus"}},{"kind":"Field","name":{"kind":"Name","value":"fairShare"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"fairGpus"}},{"kind":"Field","name":{"kind":"Name","value":"heldGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"poolWeights"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}}]}},{"kind":"Field","name":{"kind":"Name","value":"quotas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"guaranteed"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<UpdateQueueMutation, UpdateQueueMutationVariables>;
export const UpdateQuotaDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateQuota"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"queueId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"resource"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"guaranteed"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateQuota"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"queueId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"queueId"}}},{"kind":"Argument","name":{"kind":"Name","value":"resource"},"value":{"kind":"Variable","name":{"kind":"Name","value":"resource"}}},{"kind":"Argument","name":{"kind":"Name","value":"guaranteed"},"value":{"kind":"Variable","name":{"kind":"Name","value":"guaranteed"}}},{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"QueueFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"QueueFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Queue"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"canBorrow"}},{"kind":"Field","name":{"kind":"Name","value":"maxWaitSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"defaultRuntimeSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"maxRuntimeSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"suspendBorrowedDuring"}},{"kind":"Field","name":{"kind":"Name","value":"interactiveReserveGpus"}},{"kind":"Field","name":{"kind":"Name","value":"fairShare"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"fairGpus"}},{"kind":"Field","name":{"kind":"Name","value":"heldGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"poolWeights"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}}]}},{"kind":"Field","name":{"kind":"Name","value":"quotas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"guaranteed"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<UpdateQuotaMutation, UpdateQuotaMutationVariables>;
export const SetJobPriorityDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetJobPriority"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"priority"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setJobPriority"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"priority"},"value":{"kind":"Variable","name":{"kind":"Name","value":"priority"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"priorityClass"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]}}]} as unknown as DocumentNode<SetJobPriorityMutation, SetJobPriorityMutationVariables>;
export const DryRunJobDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DryRunJob"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"JobInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"dryRunJob"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"admitted"}},{"kind":"Field","name":{"kind":"Name","value":"borrowed"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"}},{"kind":"Field","name":{"kind":"Name","value":"quotaExceeded"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"queue"}},{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"used"}},{"kind":"Field","name":{"kind":"Name","value":"demand"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"whyPending"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"summary"}},{"kind":"Field","name":{"kind":"Name","value":"reasons"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cluster"}},{"kind":"Field","name":{"kind":"Name","value":"stage"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}}]}}]}}]}}]}}]} as unknown as DocumentNode<DryRunJobMutation, DryRunJobMutationVariables>;
export const ProjectJobEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"ProjectJobEvents"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"projectJobEvents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"projectId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"jobId"}},{"kind":"Field","name":{"kind":"Name","value":"toState"}}]}}]}}]} as unknown as DocumentNode<ProjectJobEventsSubscription, ProjectJobEventsSubscriptionVariables>;
export const JobEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"JobEvents"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"jobId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"jobEvents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"jobId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"jobId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"toState"}}]}}]}}]} as unknown as DocumentNode<JobEventsSubscription, JobEventsSubscriptionVariables>;
export const ClusterUpdatesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"ClusterUpdates"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"clusterUpdates"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"health"}}]}}]}}]} as unknown as DocumentNode<ClusterUpdatesSubscription, ClusterUpdatesSubscriptionVariables>;
export const ClustersDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"clusters"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ClusterFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ClusterFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Cluster"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeat"}},{"kind":"Field","name":{"kind":"Name","value":"capacityAt"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"controlPlaneMismatch"}},{"kind":"Field","name":{"kind":"Name","value":"capacity"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"rack"}},{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"allocatedMilli"}},{"kind":"Field","name":{"kind":"Name","value":"busyPct"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"metricsAt"}}]}}]}}]}}]} as unknown as DocumentNode<ClustersQuery, ClustersQueryVariables>;
export const OverviewJobsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"OverviewJobs"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","alias":{"kind":"Name","value":"recent"},"name":{"kind":"Name","value":"jobs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}}]}},{"kind":"Field","alias":{"kind":"Name","value":"waiting"},"name":{"kind":"Name","value":"jobs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"ObjectValue","fields":[{"kind":"ObjectField","name":{"kind":"Name","value":"states"},"value":{"kind":"ListValue","values":[{"kind":"EnumValue","value":"PENDING"},{"kind":"EnumValue","value":"ADMITTED"},{"kind":"EnumValue","value":"DISPATCHED"},{"kind":"EnumValue","value":"PREEMPTED"}]}}]}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]}}]} as unknown as DocumentNode<OverviewJobsQuery, OverviewJobsQueryVariables>;
export const RunningJobsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"RunningJobs"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"jobs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"ObjectValue","fields":[{"kind":"ObjectField","name":{"kind":"Name","value":"states"},"value":{"kind":"ListValue","values":[{"kind":"EnumValue","value":"RUNNING"}]}}]}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"project"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"slug"}}]}},{"kind":"Field","name":{"kind":"Name","value":"replicas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"node"}},{"kind":"Field","name":{"kind":"Name","value":"devices"}}]}}]}}]}}]}}]} as unknown as DocumentNode<RunningJobsQuery, RunningJobsQueryVariables>;
export const UsageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Usage"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"period"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"PeriodInput"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"groupBy"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UsageDimension"}}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"UsageFilter"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"usage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"period"},"value":{"kind":"Variable","name":{"kind":"Name","value":"period"}}},{"kind":"Argument","name":{"kind":"Name","value":"groupBy"},"value":{"kind":"Variable","name":{"kind":"Name","value":"groupBy"}}},{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"start"}},{"kind":"Field","name":{"kind":"Name","value":"end"}},{"kind":"Field","name":{"kind":"Name","value":"asOf"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"rows"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"project"}},{"kind":"Field","name":{"kind":"Name","value":"queue"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"}},{"kind":"Field","name":{"kind":"Name","value":"gpuModel"}},{"kind":"Field","name":{"kind":"Name","value":"user"}},{"kind":"Field","name":{"kind":"Name","value":"day"}},{"kind":"Field","name":{"kind":"Name","value":"gpuHours"}},{"kind":"Field","name":{"kind":"Name","value":"effectiveCost"}},{"kind":"Field","name":{"kind":"Name","value":"listCost"}},{"kind":"Field","name":{"kind":"Name","value":"gpuHoursValue"}},{"kind":"Field","name":{"kind":"Name","value":"effectiveCostValue"}},{"kind":"Field","name":{"kind":"Name","value":"charges"}}]}}]}}]}}]} as unknown as DocumentNode<UsageQuery, UsageQueryVariables>;
export const ExportUsageDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ExportUsage"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"period"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"PeriodInput"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"format"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ExportFormat"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"exportUsage"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"period"},"value":{"kind":"Variable","name":{"kind":"Name","value":"period"}}},{"kind":"Argument","name":{"kind":"Name","value":"format"},"value":{"kind":"Variable","name":{"kind":"Name","value":"format"}}},{"kind":"Argument","name":{"kind":"Name","value":"tenantId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"periodEnd"}},{"kind":"Field","name":{"kind":"Name","value":"format"}},{"kind":"Field","name":{"kind":"Name","value":"rows"}},{"kind":"Field","name":{"kind":"Name","value":"bytes"}},{"kind":"Field","name":{"kind":"Name","value":"sha256"}},{"kind":"Field","name":{"kind":"Name","value":"downloadUrl"}}]}}]}}]} as unknown as DocumentNode<ExportUsageMutation, ExportUsageMutationVariables>;
export const PriceBookDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"PriceBook"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"priceBook"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"gpuModel"}},{"kind":"Field","name":{"kind":"Name","value":"listPricePerGpuHour"}},{"kind":"Field","name":{"kind":"Name","value":"contractedPricePerGpuHour"}},{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"effectiveFrom"}},{"kind":"Field","name":{"kind":"Name","value":"effectiveTo"}}]}}]}}]} as unknown as DocumentNode<PriceBookQuery, PriceBookQueryVariables>;
export const SetPriceDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetPrice"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"gpuModel"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"list"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"contracted"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"currency"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"from"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTime"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"to"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTime"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setPrice"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"gpuModel"},"value":{"kind":"Variable","name":{"kind":"Name","value":"gpuModel"}}},{"kind":"Argument","name":{"kind":"Name","value":"listPricePerGpuHour"},"value":{"kind":"Variable","name":{"kind":"Name","value":"list"}}},{"kind":"Argument","name":{"kind":"Name","value":"contractedPricePerGpuHour"},"value":{"kind":"Variable","name":{"kind":"Name","value":"contracted"}}},{"kind":"Argument","name":{"kind":"Name","value":"currency"},"value":{"kind":"Variable","name":{"kind":"Name","value":"currency"}}},{"kind":"Argument","name":{"kind":"Name","value":"effectiveFrom"},"value":{"kind":"Variable","name":{"kind":"Name","value":"from"}}},{"kind":"Argument","name":{"kind":"Name","value":"effectiveTo"},"value":{"kind":"Variable","name":{"kind":"Name","value":"to"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}}]}}]}}]} as unknown as DocumentNode<SetPriceMutation, SetPriceMutationVariables>;
export const ApiTokensDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ApiTokens"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"apiTokens"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"prefix"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"expiresAt"}},{"kind":"Field","name":{"kind":"Name","value":"revokedAt"}},{"kind":"Field","name":{"kind":"Name","value":"lastUsedAt"}},{"kind":"Field","name":{"kind":"Name","value":"scopes"}}]}}]}}]} as unknown as DocumentNode<ApiTokensQuery, ApiTokensQueryVariables>;
export const CreateApiTokenDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateApiToken"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"days"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"scopes"}},"type":{"kind":"ListType","type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"TokenScope"}}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createApiToken"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}},{"kind":"Argument","name":{"kind":"Name","value":"expiresInDays"},"value":{"kind":"Variable","name":{"kind":"Name","value":"days"}}},{"kind":"Argument","name":{"kind":"Name","value":"scopes"},"value":{"kind":"Variable","name":{"kind":"Name","value":"scopes"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"secret"}},{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"expiresAt"}}]}}]}}]} as unknown as DocumentNode<CreateApiTokenMutation, CreateApiTokenMutationVariables>;
export const RevokeApiTokenDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RevokeApiToken"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"revokeApiToken"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"revokedAt"}}]}}]}}]} as unknown as DocumentNode<RevokeApiTokenMutation, RevokeApiTokenMutationVariables>;
export const RegisterClusterDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RegisterCluster"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"displayName"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"registerCluster"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"displayName"},"value":{"kind":"Variable","name":{"kind":"Name","value":"displayName"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"agentToken"}},{"kind":"Field","name":{"kind":"Name","value":"helmInstallCommand"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}}]}}]}}]}}]} as unknown as DocumentNode<RegisterClusterMutation, RegisterClusterMutationVariables>;
export const RotateAgentTokenDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RotateAgentToken"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"rotateAgentToken"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"clusterId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"agentToken"}},{"kind":"Field","name":{"kind":"Name","value":"helmInstallCommand"}},{"kind":"Field","name":{"kind":"Name","value":"cluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}}]}}]}}]}}]} as unknown as DocumentNode<RotateAgentTokenMutation, RotateAgentTokenMutationVariables>;
export const ServicesDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Services"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"project"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"services"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"project"},"value":{"kind":"Variable","name":{"kind":"Name","value":"project"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ServiceSummaryFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ServiceSummaryFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Service"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"project"}},{"kind":"Field","name":{"kind":"Name","value":"queue"}},{"kind":"Field","name":{"kind":"Name","value":"owner"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"condition"}},{"kind":"Field","name":{"kind":"Name","value":"revision"}},{"kind":"Field","name":{"kind":"Name","value":"minReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"maxReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"desiredReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"readyReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"port"}},{"kind":"Field","name":{"kind":"Name","value":"readinessPath"}},{"kind":"Field","name":{"kind":"Name","value":"image"}},{"kind":"Field","name":{"kind":"Name","value":"autoscaling"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"metric"}},{"kind":"Field","name":{"kind":"Name","value":"target"}},{"kind":"Field","name":{"kind":"Name","value":"scaleDownDelaySeconds"}}]}},{"kind":"Field","name":{"kind":"Name","value":"maxSurge"}},{"kind":"Field","name":{"kind":"Name","value":"maxUnavailable"}},{"kind":"Field","name":{"kind":"Name","value":"requestsPerSecond"}},{"kind":"Field","name":{"kind":"Name","value":"loadReportedAt"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<ServicesQuery, ServicesQueryVariables>;
export const ServiceDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Service"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"project"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"history"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"project"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"slug"},"value":{"kind":"Variable","name":{"kind":"Name","value":"project"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"myRole"}}]}},{"kind":"Field","name":{"kind":"Name","value":"service"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"project"},"value":{"kind":"Variable","name":{"kind":"Name","value":"project"}}},{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ServiceSummaryFields"}},{"kind":"Field","name":{"kind":"Name","value":"replicas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"spec"}},{"kind":"Field","name":{"kind":"Name","value":"submittedAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"utilization"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"lastBusyPct"}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"gpuUtilization"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"busyPct"}},{"kind":"Field","name":{"kind":"Name","value":"replicas"}}]}},{"kind":"Field","name":{"kind":"Name","value":"replicasByCluster"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"replicas"}},{"kind":"Field","name":{"kind":"Name","value":"ready"}},{"kind":"Field","name":{"kind":"Name","value":"endpoint"}}]}},{"kind":"Field","name":{"kind":"Name","value":"scalingHistory"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"history"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"fromReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"toReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"signal"}},{"kind":"Field","name":{"kind":"Name","value":"reason"}}]}},{"kind":"Field","name":{"kind":"Name","value":"revisions"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"revision"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"image"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ServiceSummaryFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Service"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"project"}},{"kind":"Field","name":{"kind":"Name","value":"queue"}},{"kind":"Field","name":{"kind":"Name","value":"owner"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"condition"}},{"kind":"Field","name":{"kind":"Name","value":"revision"}},{"kind":"Field","name":{"kind":"Name","value":"minReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"maxReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"desiredReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"readyReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"port"}},{"kind":"Field","name":{"kind":"Name","value":"readinessPath"}},{"kind":"Field","name":{"kind":"Name","value":"image"}},{"kind":"Field","name":{"kind":"Name","value":"autoscaling"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"metric"}},{"kind":"Field","name":{"kind":"Name","value":"target"}},{"kind":"Field","name":{"kind":"Name","value":"scaleDownDelaySeconds"}}]}},{"kind":"Field","name":{"kind":"Name","value":"maxSurge"}},{"kind":"Field","name":{"kind":"Name","value":"maxUnavailable"}},{"kind":"Field","name":{"kind":"Name","value":"requestsPerSecond"}},{"kind":"Field","name":{"kind":"Name","value":"loadReportedAt"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<ServiceQuery, ServiceQueryVariables>;
export const ApplyServiceDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ApplyService"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ServiceInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"applyService"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"applied"}},{"kind":"Field","name":{"kind":"Name","value":"service"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ServiceSummaryFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ServiceSummaryFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Service"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"project"}},{"kind":"Field","name":{"kind":"Name","value":"queue"}},{"kind":"Field","name":{"kind":"Name","value":"owner"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"condition"}},{"kind":"Field","name":{"kind":"Name","value":"revision"}},{"kind":"Field","name":{"kind":"Name","value":"minReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"maxReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"desiredReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"readyReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"port"}},{"kind":"Field","name":{"kind":"Name","value":"readinessPath"}},{"kind":"Field","name":{"kind":"Name","value":"image"}},{"kind":"Field","name":{"kind":"Name","value":"autoscaling"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"metric"}},{"kind":"Field","name":{"kind":"Name","value":"target"}},{"kind":"Field","name":{"kind":"Name","value":"scaleDownDelaySeconds"}}]}},{"kind":"Field","name":{"kind":"Name","value":"maxSurge"}},{"kind":"Field","name":{"kind":"Name","value":"maxUnavailable"}},{"kind":"Field","name":{"kind":"Name","value":"requestsPerSecond"}},{"kind":"Field","name":{"kind":"Name","value":"loadReportedAt"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<ApplyServiceMutation, ApplyServiceMutationVariables>;
export const ScaleServiceDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ScaleService"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"project"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"replicas"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"minReplicas"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"maxReplicas"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"scaleService"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"project"},"value":{"kind":"Variable","name":{"kind":"Name","value":"project"}}},{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}},{"kind":"Argument","name":{"kind":"Name","value":"replicas"},"value":{"kind":"Variable","name":{"kind":"Name","value":"replicas"}}},{"kind":"Argument","name":{"kind":"Name","value":"minReplicas"},"value":{"kind":"Variable","name":{"kind":"Name","value":"minReplicas"}}},{"kind":"Argument","name":{"kind":"Name","value":"maxReplicas"},"value":{"kind":"Variable","name":{"kind":"Name","value":"maxReplicas"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ServiceSummaryFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ServiceSummaryFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Service"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"project"}},{"kind":"Field","name":{"kind":"Name","value":"queue"}},{"kind":"Field","name":{"kind":"Name","value":"owner"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"condition"}},{"kind":"Field","name":{"kind":"Name","value":"revision"}},{"kind":"Field","name":{"kind":"Name","value":"minReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"maxReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"desiredReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"readyReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"port"}},{"kind":"Field","name":{"kind":"Name","value":"readinessPath"}},{"kind":"Field","name":{"kind":"Name","value":"image"}},{"kind":"Field","name":{"kind":"Name","value":"autoscaling"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"metric"}},{"kind":"Field","name":{"kind":"Name","value":"target"}},{"kind":"Field","name":{"kind":"Name","value":"scaleDownDelaySeconds"}}]}},{"kind":"Field","name":{"kind":"Name","value":"maxSurge"}},{"kind":"Field","name":{"kind":"Name","value":"maxUnavailable"}},{"kind":"Field","name":{"kind":"Name","value":"requestsPerSecond"}},{"kind":"Field","name":{"kind":"Name","value":"loadReportedAt"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<ScaleServiceMutation, ScaleServiceMutationVariables>;
export const SetServiceLoadDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetServiceLoad"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"project"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"requestsPerSecond"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Float"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setServiceLoad"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"project"},"value":{"kind":"Variable","name":{"kind":"Name","value":"project"}}},{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}},{"kind":"Argument","name":{"kind":"Name","value":"requestsPerSecond"},"value":{"kind":"Variable","name":{"kind":"Name","value":"requestsPerSecond"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ServiceSummaryFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ServiceSummaryFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Service"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"project"}},{"kind":"Field","name":{"kind":"Name","value":"queue"}},{"kind":"Field","name":{"kind":"Name","value":"owner"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"condition"}},{"kind":"Field","name":{"kind":"Name","value":"revision"}},{"kind":"Field","name":{"kind":"Name","value":"minReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"maxReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"desiredReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"readyReplicas"}},{"kind":"Field","name":{"kind":"Name","value":"port"}},{"kind":"Field","name":{"kind":"Name","value":"readinessPath"}},{"kind":"Field","name":{"kind":"Name","value":"image"}},{"kind":"Field","name":{"kind":"Name","value":"autoscaling"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"metric"}},{"kind":"Field","name":{"kind":"Name","value":"target"}},{"kind":"Field","name":{"kind":"Name","value":"scaleDownDelaySeconds"}}]}},{"kind":"Field","name":{"kind":"Name","value":"maxSurge"}},{"kind":"Field","name":{"kind":"Name","value":"maxUnavailable"}},{"kind":"Field","name":{"kind":"Name","value":"requestsPerSecond"}},{"kind":"Field","name":{"kind":"Name","value":"loadReportedAt"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<SetServiceLoadMutation, SetServiceLoadMutationVariables>;
export const DeleteServiceDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DeleteService"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"project"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deleteService"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"project"},"value":{"kind":"Variable","name":{"kind":"Name","value":"project"}}},{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"project"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}}]}}]} as unknown as DocumentNode<DeleteServiceMutation, DeleteServiceMutationVariables>;
export const JobMetricHistoryDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"JobMetricHistory"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"since"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTime"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"job"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"metricHistory"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"since"},"value":{"kind":"Variable","name":{"kind":"Name","value":"since"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resolutionSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"points"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"MetricPointFields"}}]}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"MetricPointFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MetricPoint"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"samples"}},{"kind":"Field","name":{"kind":"Name","value":"busyPctAvg"}},{"kind":"Field","name":{"kind":"Name","value":"busyPctMax"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMibAvg"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMibMax"}},{"kind":"Field","name":{"kind":"Name","value":"usageSamples"}},{"kind":"Field","name":{"kind":"Name","value":"cpuCoresAvg"}},{"kind":"Field","name":{"kind":"Name","value":"cpuCoresMax"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMibAvg"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMibMax"}},{"kind":"Field","name":{"kind":"Name","value":"diskReadBpsAvg"}},{"kind":"Field","name":{"kind":"Name","value":"diskWriteBpsAvg"}},{"kind":"Field","name":{"kind":"Name","value":"netRxBpsAvg"}},{"kind":"Field","name":{"kind":"Name","value":"netTxBpsAvg"}}]}}]} as unknown as DocumentNode<JobMetricHistoryQuery, JobMetricHistoryQueryVariables>;
export const ClusterMetricHistoryDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ClusterMetricHistory"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"since"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"DateTime"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cluster"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"metricHistory"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"since"},"value":{"kind":"Variable","name":{"kind":"Name","value":"since"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resolutionSeconds"}},{"kind":"Field","name":{"kind":"Name","value":"points"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"MetricPointFields"}}]}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"MetricPointFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"MetricPoint"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"samples"}},{"kind":"Field","name":{"kind":"Name","value":"busyPctAvg"}},{"kind":"Field","name":{"kind":"Name","value":"busyPctMax"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMibAvg"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMibMax"}},{"kind":"Field","name":{"kind":"Name","value":"usageSamples"}},{"kind":"Field","name":{"kind":"Name","value":"cpuCoresAvg"}},{"kind":"Field","name":{"kind":"Name","value":"cpuCoresMax"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMibAvg"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMibMax"}},{"kind":"Field","name":{"kind":"Name","value":"diskReadBpsAvg"}},{"kind":"Field","name":{"kind":"Name","value":"diskWriteBpsAvg"}},{"kind":"Field","name":{"kind":"Name","value":"netRxBpsAvg"}},{"kind":"Field","name":{"kind":"Name","value":"netTxBpsAvg"}}]}}]} as unknown as DocumentNode<ClusterMetricHistoryQuery, ClusterMetricHistoryQueryVariables>;
export const JobCostDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"JobCost"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"job"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"cost"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"effectiveCostValue"}},{"kind":"Field","name":{"kind":"Name","value":"gpuHoursValue"}}]}}]}}]}}]} as unknown as DocumentNode<JobCostQuery, JobCostQueryVariables>;
export const ServiceCostDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ServiceCost"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"project"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"service"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"project"},"value":{"kind":"Variable","name":{"kind":"Name","value":"project"}}},{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"cost"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"currency"}},{"kind":"Field","name":{"kind":"Name","value":"effectiveCostValue"}},{"kind":"Field","name":{"kind":"Name","value":"gpuHoursValue"}}]}}]}}]}}]} as unknown as DocumentNode<ServiceCostQuery, ServiceCostQueryVariables>;
export const JobLogsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"JobLogs"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"jobId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"task"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"replica"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"tail"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"jobLogs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"jobId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"jobId"}}},{"kind":"Argument","name":{"kind":"Name","value":"task"},"value":{"kind":"Variable","name":{"kind":"Name","value":"task"}}},{"kind":"Argument","name":{"kind":"Name","value":"replica"},"value":{"kind":"Variable","name":{"kind":"Name","value":"replica"}}},{"kind":"Argument","name":{"kind":"Name","value":"tail"},"value":{"kind":"Variable","name":{"kind":"Name","value":"tail"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"task"}},{"kind":"Field","name":{"kind":"Name","value":"replica"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"source"}},{"kind":"Field","name":{"kind":"Name","value":"truncated"}},{"kind":"Field","name":{"kind":"Name","value":"ended"}},{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"lines"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"stream"}},{"kind":"Field","name":{"kind":"Name","value":"text"}}]}}]}}]}}]} as unknown as DocumentNode<JobLogsQuery, JobLogsQueryVariables>;
export const FollowJobLogsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"subscription","name":{"kind":"Name","value":"FollowJobLogs"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"jobId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"task"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"replica"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"tail"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"followJobLogs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"jobId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"jobId"}}},{"kind":"Argument","name":{"kind":"Name","value":"task"},"value":{"kind":"Variable","name":{"kind":"Name","value":"task"}}},{"kind":"Argument","name":{"kind":"Name","value":"replica"},"value":{"kind":"Variable","name":{"kind":"Name","value":"replica"}}},{"kind":"Argument","name":{"kind":"Name","value":"tail"},"value":{"kind":"Variable","name":{"kind":"Name","value":"tail"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"source"}},{"kind":"Field","name":{"kind":"Name","value":"truncated"}},{"kind":"Field","name":{"kind":"Name","value":"ended"}},{"kind":"Field","name":{"kind":"Name","value":"lines"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"stream"}},{"kind":"Field","name":{"kind":"Name","value":"text"}}]}}]}}]}}]} as unknown as DocumentNode<FollowJobLogsSubscription, FollowJobLogsSubscriptionVariables>;
export const SetBudgetDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetBudget"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"unit"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"BudgetUnit"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"amount"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"softPercent"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"hard"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"suspendBorrowed"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setBudget"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"projectId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}}},{"kind":"Argument","name":{"kind":"Name","value":"tenantId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}}},{"kind":"Argument","name":{"kind":"Name","value":"unit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"unit"}}},{"kind":"Argument","name":{"kind":"Name","value":"amount"},"value":{"kind":"Variable","name":{"kind":"Name","value":"amount"}}},{"kind":"Argument","name":{"kind":"Name","value":"softPercent"},"value":{"kind":"Variable","name":{"kind":"Name","value":"softPercent"}}},{"kind":"Argument","name":{"kind":"Name","value":"hard"},"value":{"kind":"Variable","name":{"kind":"Name","value":"hard"}}},{"kind":"Argument","name":{"kind":"Name","value":"suspendBorrowed"},"value":{"kind":"Variable","name":{"kind":"Name","value":"suspendBorrowed"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"BudgetFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"BudgetFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Budget"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"unit"}},{"kind":"Field","name":{"kind":"Name","value":"unitLabel"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"amountValue"}},{"kind":"Field","name":{"kind":"Name","value":"softPercent"}},{"kind":"Field","name":{"kind":"Name","value":"hard"}},{"kind":"Field","name":{"kind":"Name","value":"suspendBorrowed"}},{"kind":"Field","name":{"kind":"Name","value":"periodStart"}},{"kind":"Field","name":{"kind":"Name","value":"periodEnd"}},{"kind":"Field","name":{"kind":"Name","value":"spentValue"}},{"kind":"Field","name":{"kind":"Name","value":"committedValue"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"burnDown"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"day"}},{"kind":"Field","name":{"kind":"Name","value":"spent"}}]}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<SetBudgetMutation, SetBudgetMutationVariables>;
export const RemoveBudgetDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RemoveBudget"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"removeBudget"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"projectId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}}},{"kind":"Argument","name":{"kind":"Name","value":"tenantId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}}}]}]}}]} as unknown as DocumentNode<RemoveBudgetMutation, RemoveBudgetMutationVariables>;
export const CordonClusterDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CordonCluster"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cordonCluster"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ClusterFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ClusterFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Cluster"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeat"}},{"kind":"Field","name":{"kind":"Name","value":"capacityAt"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"controlPlaneMismatch"}},{"kind":"Field","name":{"kind":"Name","value":"capacity"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"rack"}},{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"allocatedMilli"}},{"kind":"Field","name":{"kind":"Name","value":"busyPct"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"metricsAt"}}]}}]}}]}}]} as unknown as DocumentNode<CordonClusterMutation, CordonClusterMutationVariables>;
export const DrainClusterDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DrainCluster"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"graceSeconds"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"drainCluster"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}},{"kind":"Argument","name":{"kind":"Name","value":"graceSeconds"},"value":{"kind":"Variable","name":{"kind":"Name","value":"graceSeconds"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ClusterFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ClusterFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Cluster"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeat"}},{"kind":"Field","name":{"kind":"Name","value":"capacityAt"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"controlPlaneMismatch"}},{"kind":"Field","name":{"kind":"Name","value":"capacity"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"rack"}},{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"allocatedMilli"}},{"kind":"Field","name":{"kind":"Name","value":"busyPct"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"metricsAt"}}]}}]}}]}}]} as unknown as DocumentNode<DrainClusterMutation, DrainClusterMutationVariables>;
export const UncordonClusterDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UncordonCluster"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"uncordonCluster"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ClusterFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ClusterFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Cluster"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeat"}},{"kind":"Field","name":{"kind":"Name","value":"capacityAt"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"controlPlaneMismatch"}},{"kind":"Field","name":{"kind":"Name","value":"capacity"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"rack"}},{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"allocatedMilli"}},{"kind":"Field","name":{"kind":"Name","value":"busyPct"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"metricsAt"}}]}}]}}]}}]} as unknown as DocumentNode<UncordonClusterMutation, UncordonClusterMutationVariables>;
export const RetireClusterDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RetireCluster"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"retireCluster"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"retiredAt"}}]}}]}}]} as unknown as DocumentNode<RetireClusterMutation, RetireClusterMutationVariables>;
export const CordonNodeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CordonNode"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"node"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cordonNode"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"clusterId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}}},{"kind":"Argument","name":{"kind":"Name","value":"node"},"value":{"kind":"Variable","name":{"kind":"Name","value":"node"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ClusterFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ClusterFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Cluster"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeat"}},{"kind":"Field","name":{"kind":"Name","value":"capacityAt"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"controlPlaneMismatch"}},{"kind":"Field","name":{"kind":"Name","value":"capacity"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"rack"}},{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"allocatedMilli"}},{"kind":"Field","name":{"kind":"Name","value":"busyPct"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"metricsAt"}}]}}]}}]}}]} as unknown as DocumentNode<CordonNodeMutation, CordonNodeMutationVariables>;
export const DrainNodeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DrainNode"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"node"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"graceSeconds"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"drainNode"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"clusterId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}}},{"kind":"Argument","name":{"kind":"Name","value":"node"},"value":{"kind":"Variable","name":{"kind":"Name","value":"node"}}},{"kind":"Argument","name":{"kind":"Name","value":"graceSeconds"},"value":{"kind":"Variable","name":{"kind":"Name","value":"graceSeconds"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ClusterFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ClusterFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Cluster"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeat"}},{"kind":"Field","name":{"kind":"Name","value":"capacityAt"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"controlPlaneMismatch"}},{"kind":"Field","name":{"kind":"Name","value":"capacity"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"rack"}},{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"allocatedMilli"}},{"kind":"Field","name":{"kind":"Name","value":"busyPct"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"metricsAt"}}]}}]}}]}}]} as unknown as DocumentNode<DrainNodeMutation, DrainNodeMutationVariables>;
export const UncordonNodeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UncordonNode"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"node"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"uncordonNode"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"clusterId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}}},{"kind":"Argument","name":{"kind":"Name","value":"node"},"value":{"kind":"Variable","name":{"kind":"Name","value":"node"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"ClusterFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"ClusterFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Cluster"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"health"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"lastHeartbeat"}},{"kind":"Field","name":{"kind":"Name","value":"capacityAt"}},{"kind":"Field","name":{"kind":"Name","value":"agentVersion"}},{"kind":"Field","name":{"kind":"Name","value":"controlPlaneMismatch"}},{"kind":"Field","name":{"kind":"Name","value":"capacity"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"pools"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"nodes"}},{"kind":"Field","name":{"kind":"Name","value":"totalGpus"}},{"kind":"Field","name":{"kind":"Name","value":"freeWholeGpus"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"cordoned"}},{"kind":"Field","name":{"kind":"Name","value":"draining"}},{"kind":"Field","name":{"kind":"Name","value":"rack"}},{"kind":"Field","name":{"kind":"Name","value":"pool"}},{"kind":"Field","name":{"kind":"Name","value":"gpus"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"model"}},{"kind":"Field","name":{"kind":"Name","value":"memoryMib"}},{"kind":"Field","name":{"kind":"Name","value":"healthy"}},{"kind":"Field","name":{"kind":"Name","value":"allocatedMilli"}},{"kind":"Field","name":{"kind":"Name","value":"busyPct"}},{"kind":"Field","name":{"kind":"Name","value":"memoryUsedMib"}},{"kind":"Field","name":{"kind":"Name","value":"metricsAt"}}]}}]}}]}}]} as unknown as DocumentNode<UncordonNodeMutation, UncordonNodeMutationVariables>;
export const DeleteQueueDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DeleteQueue"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"queueId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deleteQueue"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"queueId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"queueId"}}}]}]}}]} as unknown as DocumentNode<DeleteQueueMutation, DeleteQueueMutationVariables>;
export const DeleteProjectDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"DeleteProject"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"deleteProject"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"projectId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}}]}}]}}]} as unknown as DocumentNode<DeleteProjectMutation, DeleteProjectMutationVariables>;
export const AuditEventsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"AuditEvents"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"auditEvents"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"clusterId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"clusterId"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"actor"}},{"kind":"Field","name":{"kind":"Name","value":"action"}},{"kind":"Field","name":{"kind":"Name","value":"target"}},{"kind":"Field","name":{"kind":"Name","value":"detail"}}]}}]}}]} as unknown as DocumentNode<AuditEventsQuery, AuditEventsQueryVariables>;
export const WaitingJobsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"WaitingJobs"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"JobsFilter"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"jobs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"priorityClass"}},{"kind":"Field","name":{"kind":"Name","value":"projectSlug"}},{"kind":"Field","name":{"kind":"Name","value":"queueName"}},{"kind":"Field","name":{"kind":"Name","value":"ownerSubject"}},{"kind":"Field","name":{"kind":"Name","value":"submittedAt"}},{"kind":"Field","name":{"kind":"Name","value":"queuePosition"}},{"kind":"Field","name":{"kind":"Name","value":"workloadType"}}]}}]}}]}}]} as unknown as DocumentNode<WaitingJobsQuery, WaitingJobsQueryVariables>;
export const TenantBudgetsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"TenantBudgets"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"tenants"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"budget"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"BudgetFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"BudgetFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Budget"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"unit"}},{"kind":"Field","name":{"kind":"Name","value":"unitLabel"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}},{"kind":"Field","name":{"kind":"Name","value":"amountValue"}},{"kind":"Field","name":{"kind":"Name","value":"softPercent"}},{"kind":"Field","name":{"kind":"Name","value":"hard"}},{"kind":"Field","name":{"kind":"Name","value":"suspendBorrowed"}},{"kind":"Field","name":{"kind":"Name","value":"periodStart"}},{"kind":"Field","name":{"kind":"Name","value":"periodEnd"}},{"kind":"Field","name":{"kind":"Name","value":"spentValue"}},{"kind":"Field","name":{"kind":"Name","value":"committedValue"}},{"kind":"Field","name":{"kind":"Name","value":"status"}},{"kind":"Field","name":{"kind":"Name","value":"burnDown"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"day"}},{"kind":"Field","name":{"kind":"Name","value":"spent"}}]}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]} as unknown as DocumentNode<TenantBudgetsQuery, TenantBudgetsQueryVariables>;