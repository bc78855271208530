/* eslint-disable */
import * as types from './graphql';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  query Me {\n    me {\n      id\n      subject\n      email\n      displayName\n      platformAdmin\n    }\n  }\n": typeof types.MeDocument,
    "\n  fragment QueueFields on Queue {\n    id\n    name\n    weight\n    canBorrow\n    quotas {\n      resource\n      guaranteed\n      limit\n    }\n    usage {\n      resource\n      amount\n    }\n  }\n": typeof types.QueueFieldsFragmentDoc,
    "\n  query Projects {\n    projects {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n    }\n  }\n": typeof types.ProjectsDocument,
    "\n  query Project($slug: String!) {\n    project(slug: $slug) {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n    }\n  }\n": typeof types.ProjectDocument,
    "\n  query ProjectJobs($slug: String!, $filter: JobFilterInput, $first: Int!, $after: String) {\n    project(slug: $slug) {\n      id\n      slug\n      myRole\n      queues {\n        id\n        name\n      }\n      jobs(filter: $filter, first: $first, after: $after) {\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n        nodes {\n          id\n          projectId\n          queueId\n          name\n          state\n          priority\n          priorityClass\n          preemptible\n          borrowed\n          submittedBy\n          submittedAt\n          updatedAt\n          clusterId\n          tasks {\n            id\n            name\n            replicaCount\n            state\n          }\n        }\n      }\n    }\n  }\n": typeof types.ProjectJobsDocument,
    "\n  query Job($id: ID!) {\n    job(id: $id) {\n      id\n      projectId\n      queueId\n      name\n      priority\n      priorityClass\n      preemptible\n      state\n      borrowed\n      submittedBy\n      submittedAt\n      updatedAt\n      clusterId\n      epoch\n      spec\n      whyPending {\n        summary\n        reasons {\n          cluster\n          stage\n          reason\n        }\n      }\n      tasks {\n        id\n        name\n        replicaCount\n        state\n        spec\n      }\n      replicas {\n        id\n        taskId\n        index\n        state\n        node\n        devices\n        clusterId\n        epoch\n        updatedAt\n      }\n      events {\n        id\n        taskId\n        replicaId\n        fromState\n        toState\n        cause\n        actor\n        at\n        clusterId\n        epoch\n      }\n    }\n  }\n": typeof types.JobDocument,
    "\n  query Tenants {\n    tenants {\n      id\n      slug\n      name\n      createdAt\n    }\n  }\n": typeof types.TenantsDocument,
    "\n  mutation SubmitJob($input: JobInput!) {\n    submitJob(input: $input) {\n      borrowed\n      job {\n        id\n        name\n        state\n      }\n    }\n  }\n": typeof types.SubmitJobDocument,
    "\n  mutation CancelJob($id: ID!) {\n    cancelJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n": typeof types.CancelJobDocument,
    "\n  mutation CreateTenant($slug: String!, $name: String!) {\n    createTenant(slug: $slug, name: $name) {\n      id\n      slug\n      name\n      createdAt\n    }\n  }\n": typeof types.CreateTenantDocument,
    "\n  mutation CreateProject($tenantId: ID!, $slug: String!, $name: String!) {\n    createProject(tenantId: $tenantId, slug: $slug, name: $name) {\n      id\n      slug\n      name\n    }\n  }\n": typeof types.CreateProjectDocument,
    "\n  mutation AddMember($projectId: ID!, $subject: String!, $role: ProjectRole!) {\n    addMember(projectId: $projectId, subject: $subject, role: $role)\n  }\n": typeof types.AddMemberDocument,
    "\n  mutation CreateQueue($projectId: ID!, $name: String!, $weight: Float!, $canBorrow: Boolean!) {\n    createQueue(projectId: $projectId, name: $name, weight: $weight, canBorrow: $canBorrow) {\n      ...QueueFields\n    }\n  }\n": typeof types.CreateQueueDocument,
    "\n  mutation UpdateQuota($queueId: ID!, $resource: String!, $guaranteed: Int!, $limit: Int) {\n    updateQuota(queueId: $queueId, resource: $resource, guaranteed: $guaranteed, limit: $limit) {\n      ...QueueFields\n    }\n  }\n": typeof types.UpdateQuotaDocument,
};
const documents: Documents = {
    "\n  query Me {\n    me {\n      id\n      subject\n      email\n      displayName\n      platformAdmin\n    }\n  }\n": types.MeDocument,
    "\n  fragment QueueFields on Queue {\n    id\n    name\n    weight\n    canBorrow\n    quotas {\n      resource\n      guaranteed\n      limit\n    }\n    usage {\n      resource\n      amount\n    }\n  }\n": types.QueueFieldsFragmentDoc,
    "\n  query Projects {\n    projects {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n    }\n  }\n": types.ProjectsDocument,
    "\n  query Project($slug: String!) {\n    project(slug: $slug) {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n    }\n  }\n": types.ProjectDocument,
    "\n  query ProjectJobs($slug: String!, $filter: JobFilterInput, $first: Int!, $after: String) {\n    project(slug: $slug) {\n      id\n      slug\n      myRole\n      queues {\n        id\n        name\n      }\n      jobs(filter: $filter, first: $first, after: $after) {\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n        nodes {\n          id\n          projectId\n          queueId\n          name\n          state\n          priority\n          priorityClass\n          preemptible\n          borrowed\n          submittedBy\n          submittedAt\n          updatedAt\n          clusterId\n          tasks {\n            id\n            name\n            replicaCount\n            state\n          }\n        }\n      }\n    }\n  }\n": types.ProjectJobsDocument,
    "\n  query Job($id: ID!) {\n    job(id: $id) {\n      id\n      projectId\n      queueId\n      name\n      priority\n      priorityClass\n      preemptible\n      state\n      borrowed\n      submittedBy\n      submittedAt\n      updatedAt\n      clusterId\n      epoch\n      spec\n      whyPending {\n        summary\n        reasons {\n          cluster\n          stage\n          reason\n        }\n      }\n      tasks {\n        id\n        name\n        replicaCount\n        state\n        spec\n      }\n      replicas {\n        id\n        taskId\n        index\n        state\n        node\n        devices\n        clusterId\n        epoch\n        updatedAt\n      }\n      events {\n        id\n        taskId\n        replicaId\n        fromState\n        toState\n        cause\n        actor\n        at\n        clusterId\n        epoch\n      }\n    }\n  }\n": types.JobDocument,
    "\n  query Tenants {\n    tenants {\n      id\n      slug\n      name\n      createdAt\n    }\n  }\n": types.TenantsDocument,
    "\n  mutation SubmitJob($input: JobInput!) {\n    submitJob(input: $input) {\n      borrowed\n      job {\n        id\n        name\n        state\n      }\n    }\n  }\n": types.SubmitJobDocument,
    "\n  mutation CancelJob($id: ID!) {\n    cancelJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n": types.CancelJobDocument,
    "\n  mutation CreateTenant($slug: String!, $name: String!) {\n    createTenant(slug: $slug, name: $name) {\n      id\n      slug\n      name\n      createdAt\n    }\n  }\n": types.CreateTenantDocument,
    "\n  mutation CreateProject($tenantId: ID!, $slug: String!, $name: String!) {\n    createProject(tenantId: $tenantId, slug: $slug, name: $name) {\n      id\n      slug\n      name\n    }\n  }\n": types.CreateProjectDocument,
    "\n  mutation AddMember($projectId: ID!, $subject: String!, $role: ProjectRole!) {\n    addMember(projectId: $projectId, subject: $subject, role: $role)\n  }\n": types.AddMemberDocument,
    "\n  mutation CreateQueue($projectId: ID!, $name: String!, $weight: Float!, $canBorrow: Boolean!) {\n    createQueue(projectId: $projectId, name: $name, weight: $weight, canBorrow: $canBorrow) {\n      ...QueueFields\n    }\n  }\n": types.CreateQueueDocument,
    "\n  mutation UpdateQuota($queueId: ID!, $resource: String!, $guaranteed: Int!, $limit: Int) {\n    updateQuota(queueId: $queueId, resource: $resource, guaranteed: $guaranteed, limit: $limit) {\n      ...QueueFields\n    }\n  }\n": types.UpdateQuotaDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Me {\n    me {\n      id\n      subject\n      email\n      displayName\n      platformAdmin\n    }\n  }\n"): (typeof documents)["\n  query Me {\n    me {\n      id\n      subject\n      email\n      displayName\n      platformAdmin\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment QueueFields on Queue {\n    id\n    name\n    weight\n    canBorrow\n    quotas {\n      resource\n      guaranteed\n      limit\n    }\n    usage {\n      resource\n      amount\n    }\n  }\n"): (typeof documents)["\n  fragment QueueFields on Queue {\n    id\n    name\n    weight\n    canBorrow\n    quotas {\n      resource\n      guaranteed\n      limit\n    }\n    usage {\n      resource\n      amount\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Projects {\n    projects {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query Projects {\n    projects {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Project($slug: String!) {\n    project(slug: $slug) {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query Project($slug: String!) {\n    project(slug: $slug) {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ProjectJobs($slug: String!, $filter: JobFilterInput, $first: Int!, $after: String) {\n    project(slug: $slug) {\n      id\n      slug\n      myRole\n      queues {\n        id\n        name\n      }\n      jobs(filter: $filter, first: $first, after: $after) {\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n        nodes {\n          id\n          projectId\n          queueId\n          name\n          state\n          priority\n          priorityClass\n          preemptible\n          borrowed\n          submittedBy\n          submittedAt\n          updatedAt\n          clusterId\n          tasks {\n            id\n            name\n            replicaCount\n            state\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ProjectJobs($slug: String!, $filter: JobFilterInput, $first: Int!, $after: String) {\n    project(slug: $slug) {\n      id\n      slug\n      myRole\n      queues {\n        id\n        name\n      }\n      jobs(filter: $filter, first: $first, after: $after) {\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n        nodes {\n          id\n          projectId\n          queueId\n          name\n          state\n          priority\n          priorityClass\n          preemptible\n          borrowed\n          submittedBy\n          submittedAt\n          updatedAt\n          clusterId\n          tasks {\n            id\n            name\n            replicaCount\n            state\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Job($id: ID!) {\n    job(id: $id) {\n      id\n      projectId\n      queueId\n      name\n      priority\n      priorityClass\n      preemptible\n      state\n      borrowed\n      submittedBy\n      submittedAt\n      updatedAt\n      clusterId\n      epoch\n      spec\n      whyPending {\n        summary\n        reasons {\n          cluster\n          stage\n          reason\n        }\n      }\n      tasks {\n        id\n        name\n        replicaCount\n        state\n        spec\n      }\n      replicas {\n        id\n        taskId\n        index\n        state\n        node\n        devices\n        clusterId\n        epoch\n        updatedAt\n      }\n      events {\n        id\n        taskId\n        replicaId\n        fromState\n        toState\n        cause\n        actor\n        at\n        clusterId\n        epoch\n      }\n    }\n  }\n"): (typeof documents)["\n  query Job($id: ID!) {\n    job(id: $id) {\n      id\n      projectId\n      queueId\n      name\n      priority\n      priorityClass\n      preemptible\n      state\n      borrowed\n      submittedBy\n      submittedAt\n      updatedAt\n      clusterId\n      epoch\n      spec\n      whyPending {\n        summary\n        reasons {\n          cluster\n          stage\n          reason\n        }\n      }\n      tasks {\n        id\n        name\n        replicaCount\n        state\n        spec\n      }\n      replicas {\n        id\n        taskId\n        index\n        state\n        node\n        devices\n        clusterId\n        epoch\n        updatedAt\n      }\n      events {\n        id\n        taskId\n        replicaId\n        fromState\n        toState\n        cause\n        actor\n        at\n        clusterId\n        epoch\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Tenants {\n    tenants {\n      id\n      slug\n      name\n      createdAt\n    }\n  }\n"): (typeof documents)["\n  query Tenants {\n    tenants {\n      id\n      slug\n      name\n      createdAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SubmitJob($input: JobInput!) {\n    submitJob(input: $input) {\n      borrowed\n      job {\n        id\n        name\n        state\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation SubmitJob($input: JobInput!) {\n    submitJob(input: $input) {\n      borrowed\n      job {\n        id\n        name\n        state\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CancelJob($id: ID!) {\n    cancelJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n"): (typeof documents)["\n  mutation CancelJob($id: ID!) {\n    cancelJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateTenant($slug: String!, $name: String!) {\n    createTenant(slug: $slug, name: $name) {\n      id\n      slug\n      name\n      createdAt\n    }\n  }\n"): (typeof documents)["\n  mutation CreateTenant($slug: String!, $name: String!) {\n    createTenant(slug: $slug, name: $name) {\n      id\n      slug\n      name\n      createdAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateProject($tenantId: ID!, $slug: String!, $name: String!) {\n    createProject(tenantId: $tenantId, slug: $slug, name: $name) {\n      id\n      slug\n      name\n    }\n  }\n"): (typeof documents)["\n  mutation CreateProject($tenantId: ID!, $slug: String!, $name: String!) {\n    createProject(tenantId: $tenantId, slug: $slug, name: $name) {\n      id\n      slug\n      name\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation AddMember($projectId: ID!, $subject: String!, $role: ProjectRole!) {\n    addMember(projectId: $projectId, subject: $subject, role: $role)\n  }\n"): (typeof documents)["\n  mutation AddMember($projectId: ID!, $subject: String!, $role: ProjectRole!) {\n    addMember(projectId: $projectId, subject: $subject, role: $role)\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateQueue($projectId: ID!, $name: String!, $weight: Float!, $canBorrow: Boolean!) {\n    createQueue(projectId: $projectId, name: $name, weight: $weight, canBorrow: $canBorrow) {\n      ...QueueFields\n    }\n  }\n"): (typeof documents)["\n  mutation CreateQueue($projectId: ID!, $name: String!, $weight: Float!, $canBorrow: Boolean!) {\n    createQueue(projectId: $projectId, name: $name, weight: $weight, canBorrow: $canBorrow) {\n      ...QueueFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateQuota($queueId: ID!, $resource: String!, $guaranteed: Int!, $limit: Int) {\n    updateQuota(queueId: $queueId, resource: $resource, guaranteed: $guaranteed, limit: $limit) {\n      ...QueueFields\n    }\n  }\n"): (typeof documents)["\n  mutation UpdateQuota($queueId: ID!, $resource: String!, $guaranteed: Int!, $limit: Int) {\n    updateQuota(queueId: $queueId, resource: $resource, guaranteed: $guaranteed, limit: $limit) {\n      ...QueueFields\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;