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

export type ElasticInput = {
  max: Scalars['Int']['input'];
  min: Scalars['Int']['input'];
};

export type GangInput = {
  minMembers: Scalars['Int']['input'];
};

export type Job = {
  __typename?: 'Job';
  /** Admitted above the queue's guarantee: preemptible by other queues. */
  borrowed: Scalars['Boolean']['output'];
  clusterId?: Maybe<Scalars['String']['output']>;
  epoch: Scalars['Int']['output'];
  /** The append-only event trail, oldest first. */
  events: Array<JobEvent>;
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  preemptible: Scalars['Boolean']['output'];
  priority: Scalars['Int']['output'];
  priorityClass: Scalars['String']['output'];
  projectId: Scalars['ID']['output'];
  queueId: Scalars['ID']['output'];
  replicas: Array<Replica>;
  /** The job as submitted (wire JobSpec, snake_case). */
  spec: Scalars['JSON']['output'];
  state: JobState;
  submittedAt: Scalars['DateTime']['output'];
  submittedBy: Scalars['ID']['output'];
  tasks: Array<Task>;
  updatedAt: Scalars['DateTime']['output'];
  /** Why the job is not yet admitted or placed, per stage and cluster. */
  whyPending?: Maybe<Scalars['JSON']['output']>;
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
  at: Scalars['DateTime']['output'];
  cause: Scalars['String']['output'];
  clusterId?: Maybe<Scalars['String']['output']>;
  epoch?: Maybe<Scalars['Int']['output']>;
  fromState?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
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
  clusterSelector?: Array<KeyValueInput>;
  elastic?: InputMaybe<ElasticInput>;
  gang?: InputMaybe<GangInput>;
  labels?: Array<KeyValueInput>;
  /** Humantime duration (`90m`, `2h`). */
  maxRuntime?: InputMaybe<Scalars['String']['input']>;
  name: Scalars['String']['input'];
  policies?: Array<PolicyInput>;
  preemptible?: Scalars['Boolean']['input'];
  /** Priority class name: low, normal (default), high, critical. */
  priority?: InputMaybe<Scalars['String']['input']>;
  /** Project slug. */
  project: Scalars['String']['input'];
  /** Queue name; the project's `default` queue when absent. */
  queue?: InputMaybe<Scalars['String']['input']>;
  tasks: Array<TaskInput>;
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
  | 'SUCCEEDED';

export type KeyValueInput = {
  key: Scalars['String']['input'];
  value: Scalars['String']['input'];
};

export type Mutation = {
  __typename?: 'Mutation';
  /**
   * Project admin. `subject` is the user's identity (`dev:alice`, or the OIDC subject);
   * the user must have signed in once.
   */
  addMember: Scalars['Boolean']['output'];
  /** Member for their own jobs; project admin for any job of the project. */
  cancelJob: Job;
  /** Tenant admin of `tenantId`. Creates the project's `default` queue too. */
  createProject: Project;
  /** Project admin. */
  createQueue: Queue;
  /** Platform admin only. */
  createTenant: Tenant;
  /** Project admin. Removes a direct project membership (tenant roles are untouched). */
  removeMember: Scalars['Boolean']['output'];
  /** Project admin. Changes the role of an existing member. */
  setRole: Scalars['Boolean']['output'];
  /** Member. Validates, resolves the priority class, runs admission and stores the job. */
  submitJob: SubmitJobPayload;
  /**
   * Project admin. Sets one quota of a queue (`gpu`, `gpu/<model>` in GPU milli;
   * `cpu_milli`; `memory_mib`); `limit: null` lets the queue borrow without bound.
   */
  updateQuota: Queue;
};


export type MutationAddMemberArgs = {
  projectId: Scalars['ID']['input'];
  role: ProjectRole;
  subject: Scalars['String']['input'];
};


export type MutationCancelJobArgs = {
  id: Scalars['ID']['input'];
};


export type MutationCreateProjectArgs = {
  name: Scalars['String']['input'];
  slug: Scalars['String']['input'];
  tenantId: Scalars['ID']['input'];
};


export type MutationCreateQueueArgs = {
  canBorrow?: Scalars['Boolean']['input'];
  name: Scalars['String']['input'];
  projectId: Scalars['ID']['input'];
  weight?: Scalars['Float']['input'];
};


export type MutationCreateTenantArgs = {
  name: Scalars['String']['input'];
  slug: Scalars['String']['input'];
};


export type MutationRemoveMemberArgs = {
  projectId: Scalars['ID']['input'];
  userId: Scalars['ID']['input'];
};


export type MutationSetRoleArgs = {
  projectId: Scalars['ID']['input'];
  role: ProjectRole;
  userId: Scalars['ID']['input'];
};


export type MutationSubmitJobArgs = {
  input: JobInput;
};


export type MutationUpdateQuotaArgs = {
  guaranteed: Scalars['Int']['input'];
  limit?: InputMaybe<Scalars['Int']['input']>;
  queueId: Scalars['ID']['input'];
  resource: Scalars['String']['input'];
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

/** A project, with the caller's role in it. Only built after authorization. */
export type Project = {
  __typename?: 'Project';
  createdAt: Scalars['DateTime']['output'];
  id: Scalars['ID']['output'];
  /** Jobs, newest first; `after` is the `endCursor` of the previous page. */
  jobs: JobConnection;
  myRole: RoleName;
  name: Scalars['String']['output'];
  queues: Array<Queue>;
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
  /** One job, with its tasks, replicas and events. */
  job: Job;
  /** The authenticated caller. */
  me: User;
  /** One project by id or slug (exactly one of them). */
  project: Project;
  /** Projects the caller can see, with the caller's role in each. */
  projects: Array<Project>;
  /** Tenants in which the caller has a role (all of them for a platform admin). */
  tenants: Array<Tenant>;
};


export type QueryJobArgs = {
  id: Scalars['ID']['input'];
};


export type QueryProjectArgs = {
  id?: InputMaybe<Scalars['ID']['input']>;
  slug?: InputMaybe<Scalars['String']['input']>;
};

export type Queue = {
  __typename?: 'Queue';
  canBorrow: Scalars['Boolean']['output'];
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  quotas: Array<Quota>;
  /** What the queue's admitted jobs hold now, per resource key. */
  usage: Array<ResourceAmount>;
  weight: Scalars['Float']['output'];
};

/** One quota: amounts of `gpu` and `gpu/<model>` are GPU milli (1000 = one GPU). */
export type Quota = {
  __typename?: 'Quota';
  guaranteed: Scalars['Int']['output'];
  /** `null`: the queue may borrow without bound. */
  limit?: Maybe<Scalars['Int']['output']>;
  resource: Scalars['String']['output'];
};

export type Replica = {
  __typename?: 'Replica';
  clusterId?: Maybe<Scalars['String']['output']>;
  devices?: Maybe<Scalars['JSON']['output']>;
  epoch?: Maybe<Scalars['Int']['output']>;
  id: Scalars['ID']['output'];
  index: Scalars['Int']['output'];
  node?: Maybe<Scalars['String']['output']>;
  state: Scalars['String']['output'];
  taskId: Scalars['ID']['output'];
  updatedAt: Scalars['DateTime']['output'];
};

export type ResourceAmount = {
  __typename?: 'ResourceAmount';
  amount: Scalars['Int']['output'];
  resource: Scalars['String']['output'];
};

export type ResourcesInput = {
  cpuMilli?: Scalars['Int']['input'];
  gpuMemoryMib?: InputMaybe<Scalars['Int']['input']>;
  /** 1..1000: a fraction of one GPU (only with gpus = 1). */
  gpuMilli?: InputMaybe<Scalars['Int']['input']>;
  gpuModels?: Array<Scalars['String']['input']>;
  gpus?: Scalars['Int']['input'];
  memoryMib?: Scalars['Int']['input'];
};

/** A role as the API names it. */
export type RoleName =
  | 'MEMBER'
  | 'PLATFORM_ADMIN'
  | 'PROJECT_ADMIN'
  | 'TENANT_ADMIN'
  | 'VIEWER';

export type Scope =
  | 'ANY'
  | 'NODE'
  | 'NVLINK'
  | 'RACK';

/** Result of `submitJob`. */
export type SubmitJobPayload = {
  __typename?: 'SubmitJobPayload';
  /** Admitted above the queue's guarantee (preemptible by other queues). */
  borrowed: Scalars['Boolean']['output'];
  job: Job;
};

export type Task = {
  __typename?: 'Task';
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  replicas: Scalars['Int']['output'];
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
  createdAt: Scalars['DateTime']['output'];
  id: Scalars['ID']['output'];
  name: Scalars['String']['output'];
  slug: Scalars['String']['output'];
};

export type TopologyInput = {
  scope: Scope;
};

export type User = {
  __typename?: 'User';
  displayName?: Maybe<Scalars['String']['output']>;
  email?: Maybe<Scalars['String']['output']>;
  id: Scalars['ID']['output'];
  platformAdmin: Scalars['Boolean']['output'];
  subject: Scalars['String']['output'];
};

export type MeQueryVariables = Exact<{ [key: string]: never; }>;


export type MeQuery = { __typename?: 'Query', me: { __typename?: 'User', id: string, subject: string, email?: string | null, displayName?: string | null, platformAdmin: boolean } };

export type QueueFieldsFragment = { __typename?: 'Queue', id: string, name: string, weight: number, canBorrow: boolean, quotas: Array<{ __typename?: 'Quota', resource: string, guaranteed: number, limit?: number | null }>, usage: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> };

export type ProjectsQueryVariables = Exact<{ [key: string]: never; }>;


export type ProjectsQuery = { __typename?: 'Query', projects: Array<{ __typename?: 'Project', id: string, tenantId: string, slug: string, name: string, myRole: RoleName, createdAt: string, queues: Array<{ __typename?: 'Queue', id: string, name: string, weight: number, canBorrow: boolean, quotas: Array<{ __typename?: 'Quota', resource: string, guaranteed: number, limit?: number | null }>, usage: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> }> }> };

export type ProjectQueryVariables = Exact<{
  slug: Scalars['String']['input'];
}>;


export type ProjectQuery = { __typename?: 'Query', project: { __typename?: 'Project', id: string, tenantId: string, slug: string, name: string, myRole: RoleName, createdAt: string, queues: Array<{ __typename?: 'Queue', id: string, name: string, weight: number, canBorrow: boolean, quotas: Array<{ __typename?: 'Quota', resource: string, guaranteed: number, limit?: number | null }>, usage: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> }> } };

export type ProjectJobsQueryVariables = Exact<{
  slug: Scalars['String']['input'];
  filter?: InputMaybe<JobFilterInput>;
  first: Scalars['Int']['input'];
  after?: InputMaybe<Scalars['String']['input']>;
}>;


export type ProjectJobsQuery = { __typename?: 'Query', project: { __typename?: 'Project', id: string, slug: string, myRole: RoleName, queues: Array<{ __typename?: 'Queue', id: string, name: string }>, jobs: { __typename?: 'JobConnection', pageInfo: { __typename?: 'PageInfo', hasNextPage: boolean, endCursor?: string | null }, nodes: Array<{ __typename?: 'Job', id: string, projectId: string, queueId: string, name: string, state: JobState, priority: number, priorityClass: string, preemptible: boolean, borrowed: boolean, submittedBy: string, submittedAt: string, updatedAt: string, clusterId?: string | null, tasks: Array<{ __typename?: 'Task', id: string, name: string, replicas: number, state: string }> }> } } };

export type JobQueryVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type JobQuery = { __typename?: 'Query', job: { __typename?: 'Job', id: string, projectId: string, queueId: string, name: string, priority: number, priorityClass: string, preemptible: boolean, state: JobState, borrowed: boolean, submittedBy: string, submittedAt: string, updatedAt: string, clusterId?: string | null, epoch: number, spec: unknown, whyPending?: unknown | null, tasks: Array<{ __typename?: 'Task', id: string, name: string, replicas: number, state: string, spec: unknown }>, replicas: Array<{ __typename?: 'Replica', id: string, taskId: string, index: number, state: string, node?: string | null, devices?: unknown | null, clusterId?: string | null, epoch?: number | null, updatedAt: string }>, events: Array<{ __typename?: 'JobEvent', id: string, taskId?: string | null, replicaId?: string | null, fromState?: string | null, toState: string, cause: string, actor: string, at: string, clusterId?: string | null, epoch?: number | null }> } };

export type TenantsQueryVariables = Exact<{ [key: string]: never; }>;


export type TenantsQuery = { __typename?: 'Query', tenants: Array<{ __typename?: 'Tenant', id: string, slug: string, name: string, createdAt: string }> };

export type SubmitJobMutationVariables = Exact<{
  input: JobInput;
}>;


export type SubmitJobMutation = { __typename?: 'Mutation', submitJob: { __typename?: 'SubmitJobPayload', borrowed: boolean, job: { __typename?: 'Job', id: string, name: string, state: JobState } } };

export type CancelJobMutationVariables = Exact<{
  id: Scalars['ID']['input'];
}>;


export type CancelJobMutation = { __typename?: 'Mutation', cancelJob: { __typename?: 'Job', id: string, state: JobState, updatedAt: string } };

export type CreateTenantMutationVariables = Exact<{
  slug: Scalars['String']['input'];
  name: Scalars['String']['input'];
}>;


export type CreateTenantMutation = { __typename?: 'Mutation', createTenant: { __typename?: 'Tenant', id: string, slug: string, name: string, createdAt: string } };

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


export type CreateQueueMutation = { __typename?: 'Mutation', createQueue: { __typename?: 'Queue', id: string, name: string, weight: number, canBorrow: boolean, quotas: Array<{ __typename?: 'Quota', resource: string, guaranteed: number, limit?: number | null }>, usage: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> } };

export type UpdateQuotaMutationVariables = Exact<{
  queueId: Scalars['ID']['input'];
  resource: Scalars['String']['input'];
  guaranteed: Scalars['Int']['input'];
  limit?: InputMaybe<Scalars['Int']['input']>;
}>;


export type UpdateQuotaMutation = { __typename?: 'Mutation', updateQuota: { __typename?: 'Queue', id: string, name: string, weight: number, canBorrow: boolean, quotas: Array<{ __typename?: 'Quota', resource: string, guaranteed: number, limit?: number | null }>, usage: Array<{ __typename?: 'ResourceAmount', resource: string, amount: number }> } };

export const QueueFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"QueueFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Queue"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"canBorrow"}},{"kind":"Field","name":{"kind":"Name","value":"quotas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"guaranteed"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<QueueFieldsFragment, unknown>;
export const MeDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Me"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"me"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"subject"}},{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"platformAdmin"}}]}}]}}]} as unknown as DocumentNode<MeQuery, MeQueryVariables>;
export const ProjectsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Projects"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"projects"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"tenantId"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"myRole"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"queues"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"QueueFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"QueueFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Queue"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"canBorrow"}},{"kind":"Field","name":{"kind":"Name","value":"quotas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"guaranteed"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<ProjectsQuery, ProjectsQueryVariables>;
export const ProjectDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Project"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"slug"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"project"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"slug"},"value":{"kind":"Variable","name":{"kind":"Name","value":"slug"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"tenantId"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"myRole"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}},{"kind":"Field","name":{"kind":"Name","value":"queues"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"QueueFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"QueueFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Queue"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"canBorrow"}},{"kind":"Field","name":{"kind":"Name","value":"quotas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"guaranteed"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<ProjectQuery, ProjectQueryVariables>;
export const ProjectJobsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"ProjectJobs"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"slug"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"JobFilterInput"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"project"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"slug"},"value":{"kind":"Variable","name":{"kind":"Name","value":"slug"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"myRole"}},{"kind":"Field","name":{"kind":"Name","value":"queues"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}},{"kind":"Field","name":{"kind":"Name","value":"jobs"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}},{"kind":"Field","name":{"kind":"Name","value":"nodes"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"projectId"}},{"kind":"Field","name":{"kind":"Name","value":"queueId"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"priorityClass"}},{"kind":"Field","name":{"kind":"Name","value":"preemptible"}},{"kind":"Field","name":{"kind":"Name","value":"borrowed"}},{"kind":"Field","name":{"kind":"Name","value":"submittedBy"}},{"kind":"Field","name":{"kind":"Name","value":"submittedAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"tasks"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"replicas"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}}]}}]}}]}}]}}]} as unknown as DocumentNode<ProjectJobsQuery, ProjectJobsQueryVariables>;
export const JobDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Job"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"job"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"projectId"}},{"kind":"Field","name":{"kind":"Name","value":"queueId"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"priority"}},{"kind":"Field","name":{"kind":"Name","value":"priorityClass"}},{"kind":"Field","name":{"kind":"Name","value":"preemptible"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"borrowed"}},{"kind":"Field","name":{"kind":"Name","value":"submittedBy"}},{"kind":"Field","name":{"kind":"Name","value":"submittedAt"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"epoch"}},{"kind":"Field","name":{"kind":"Name","value":"spec"}},{"kind":"Field","name":{"kind":"Name","value":"whyPending"}},{"kind":"Field","name":{"kind":"Name","value":"tasks"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"replicas"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"spec"}}]}},{"kind":"Field","name":{"kind":"Name","value":"replicas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"taskId"}},{"kind":"Field","name":{"kind":"Name","value":"index"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"node"}},{"kind":"Field","name":{"kind":"Name","value":"devices"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"epoch"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}},{"kind":"Field","name":{"kind":"Name","value":"events"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"taskId"}},{"kind":"Field","name":{"kind":"Name","value":"replicaId"}},{"kind":"Field","name":{"kind":"Name","value":"fromState"}},{"kind":"Field","name":{"kind":"Name","value":"toState"}},{"kind":"Field","name":{"kind":"Name","value":"cause"}},{"kind":"Field","name":{"kind":"Name","value":"actor"}},{"kind":"Field","name":{"kind":"Name","value":"at"}},{"kind":"Field","name":{"kind":"Name","value":"clusterId"}},{"kind":"Field","name":{"kind":"Name","value":"epoch"}}]}}]}}]}}]} as unknown as DocumentNode<JobQuery, JobQueryVariables>;
export const TenantsDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Tenants"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"tenants"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]} as unknown as DocumentNode<TenantsQuery, TenantsQueryVariables>;
export const SubmitJobDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SubmitJob"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"JobInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"submitJob"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"borrowed"}},{"kind":"Field","name":{"kind":"Name","value":"job"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}}]}}]}}]} as unknown as DocumentNode<SubmitJobMutation, SubmitJobMutationVariables>;
export const CancelJobDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CancelJob"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cancelJob"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"updatedAt"}}]}}]}}]} as unknown as DocumentNode<CancelJobMutation, CancelJobMutationVariables>;
export const CreateTenantDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateTenant"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"slug"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createTenant"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"slug"},"value":{"kind":"Variable","name":{"kind":"Name","value":"slug"}}},{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"createdAt"}}]}}]}}]} as unknown as DocumentNode<CreateTenantMutation, CreateTenantMutationVariables>;
export const CreateProjectDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateProject"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"slug"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createProject"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"tenantId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"tenantId"}}},{"kind":"Argument","name":{"kind":"Name","value":"slug"},"value":{"kind":"Variable","name":{"kind":"Name","value":"slug"}}},{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"slug"}},{"kind":"Field","name":{"kind":"Name","value":"name"}}]}}]}}]} as unknown as DocumentNode<CreateProjectMutation, CreateProjectMutationVariables>;
export const AddMemberDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AddMember"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"subject"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"role"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ProjectRole"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"addMember"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"projectId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}}},{"kind":"Argument","name":{"kind":"Name","value":"subject"},"value":{"kind":"Variable","name":{"kind":"Name","value":"subject"}}},{"kind":"Argument","name":{"kind":"Name","value":"role"},"value":{"kind":"Variable","name":{"kind":"Name","value":"role"}}}]}]}}]} as unknown as DocumentNode<AddMemberMutation, AddMemberMutationVariables>;
export const CreateQueueDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"CreateQueue"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"name"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"weight"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Float"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"canBorrow"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"createQueue"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"projectId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"projectId"}}},{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"Variable","name":{"kind":"Name","value":"name"}}},{"kind":"Argument","name":{"kind":"Name","value":"weight"},"value":{"kind":"Variable","name":{"kind":"Name","value":"weight"}}},{"kind":"Argument","name":{"kind":"Name","value":"canBorrow"},"value":{"kind":"Variable","name":{"kind":"Name","value":"canBorrow"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"QueueFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"QueueFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Queue"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"canBorrow"}},{"kind":"Field","name":{"kind":"Name","value":"quotas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"guaranteed"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<CreateQueueMutation, CreateQueueMutationVariables>;
export const UpdateQuotaDocument = {"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateQuota"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"queueId"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"resource"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"guaranteed"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"limit"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateQuota"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"queueId"},"value":{"kind":"Variable","name":{"kind":"Name","value":"queueId"}}},{"kind":"Argument","name":{"kind":"Name","value":"resource"},"value":{"kind":"Variable","name":{"kind":"Name","value":"resource"}}},{"kind":"Argument","name":{"kind":"Name","value":"guaranteed"},"value":{"kind":"Variable","name":{"kind":"Name","value":"guaranteed"}}},{"kind":"Argument","name":{"kind":"Name","value":"limit"},"value":{"kind":"Variable","name":{"kind":"Name","value":"limit"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"QueueFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"QueueFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Queue"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"weight"}},{"kind":"Field","name":{"kind":"Name","value":"canBorrow"}},{"kind":"Field","name":{"kind":"Name","value":"quotas"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"guaranteed"}},{"kind":"Field","name":{"kind":"Name","value":"limit"}}]}},{"kind":"Field","name":{"kind":"Name","value":"usage"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resource"}},{"kind":"Field","name":{"kind":"Name","value":"amount"}}]}}]}}]} as unknown as DocumentNode<UpdateQuotaMutation, UpdateQuotaMutationVariables>;