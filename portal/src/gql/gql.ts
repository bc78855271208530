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
    "\n  fragment QueueFields on Queue {\n    id\n    name\n    weight\n    canBorrow\n    maxWaitSeconds\n    defaultRuntimeSeconds\n    maxRuntimeSeconds\n    suspendBorrowedDuring\n    quotas {\n      resource\n      guaranteed\n      limit\n    }\n    usage {\n      resource\n      amount\n    }\n  }\n": typeof types.QueueFieldsFragmentDoc,
    "\n  query Projects {\n    projects {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n    }\n  }\n": typeof types.ProjectsDocument,
    "\n  query Project($slug: String!) {\n    project(slug: $slug) {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n      members {\n        role\n        user {\n          id\n          subject\n          email\n          displayName\n        }\n      }\n    }\n  }\n": typeof types.ProjectDocument,
    "\n  query ProjectJobs($slug: String!, $filter: JobFilterInput, $first: Int!, $after: String) {\n    project(slug: $slug) {\n      id\n      slug\n      myRole\n      queues {\n        id\n        name\n      }\n      jobs(filter: $filter, first: $first, after: $after) {\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n        nodes {\n          id\n          projectId\n          queueId\n          name\n          state\n          priority\n          priorityClass\n          preemptible\n          borrowed\n          submittedBy\n          submitter {\n            id\n            subject\n          }\n          submittedAt\n          updatedAt\n          clusterId\n          tasks {\n            id\n            name\n            replicaCount\n            state\n          }\n        }\n      }\n    }\n  }\n": typeof types.ProjectJobsDocument,
    "\n  query Job($id: ID!) {\n    job(id: $id) {\n      id\n      projectId\n      queueId\n      name\n      priority\n      priorityClass\n      preemptible\n      state\n      borrowed\n      submittedBy\n      submitter {\n        id\n        subject\n        displayName\n      }\n      submittedAt\n      updatedAt\n      clusterId\n      epoch\n      spec\n      whyPending {\n        summary\n        reasons {\n          cluster\n          stage\n          reason\n        }\n      }\n      tasks {\n        id\n        name\n        replicaCount\n        state\n        spec\n      }\n      replicas {\n        id\n        taskId\n        index\n        state\n        node\n        devices\n        clusterId\n        epoch\n        updatedAt\n      }\n      utilization {\n        samples\n        avgBusyPct\n        maxBusyPct\n        lastBusyPct\n        avgMemoryUsedMib\n        maxMemoryUsedMib\n        updatedAt\n      }\n      dispatches {\n        id\n        epoch\n        clusterId\n        dispatchedAt\n        acknowledgedAt\n        outcome\n        reason\n      }\n      events {\n        id\n        taskId\n        replicaId\n        fromState\n        toState\n        cause\n        actor\n        at\n        clusterId\n        epoch\n      }\n    }\n  }\n": typeof types.JobDocument,
    "\n  fragment TenantRightsFields on TenantRights {\n    maxPriorityClass\n    mayPreempt\n    reclaimFromAny\n    reclaimFrom\n  }\n": typeof types.TenantRightsFieldsFragmentDoc,
    "\n  query Tenants {\n    tenants {\n      id\n      slug\n      name\n      createdAt\n      rights {\n        ...TenantRightsFields\n      }\n    }\n  }\n": typeof types.TenantsDocument,
    "\n  mutation SetTenantRights($tenantId: ID!, $maxPriorityClass: String, $mayPreempt: Boolean, $reclaimFromAny: Boolean, $reclaimFrom: [ID!]) {\n    setTenantRights(tenantId: $tenantId, maxPriorityClass: $maxPriorityClass, mayPreempt: $mayPreempt, reclaimFromAny: $reclaimFromAny, reclaimFrom: $reclaimFrom) {\n      id\n      rights {\n        ...TenantRightsFields\n      }\n    }\n  }\n": typeof types.SetTenantRightsDocument,
    "\n  mutation SubmitJob($input: JobInput!) {\n    submitJob(input: $input) {\n      borrowed\n      job {\n        id\n        name\n        state\n      }\n    }\n  }\n": typeof types.SubmitJobDocument,
    "\n  mutation CancelJob($id: ID!) {\n    cancelJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n": typeof types.CancelJobDocument,
    "\n  mutation SuspendJob($id: ID!) {\n    suspendJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n": typeof types.SuspendJobDocument,
    "\n  mutation ResumeJob($id: ID!) {\n    resumeJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n": typeof types.ResumeJobDocument,
    "\n  mutation CreateTenant($slug: String!, $name: String!) {\n    createTenant(slug: $slug, name: $name) {\n      id\n      slug\n      name\n      createdAt\n      rights {\n        ...TenantRightsFields\n      }\n    }\n  }\n": typeof types.CreateTenantDocument,
    "\n  mutation CreateProject($tenantId: ID!, $slug: String!, $name: String!) {\n    createProject(tenantId: $tenantId, slug: $slug, name: $name) {\n      id\n      slug\n      name\n    }\n  }\n": typeof types.CreateProjectDocument,
    "\n  mutation AddMember($projectId: ID!, $subject: String!, $role: ProjectRole!) {\n    addMember(projectId: $projectId, subject: $subject, role: $role)\n  }\n": typeof types.AddMemberDocument,
    "\n  mutation CreateQueue($projectId: ID!, $name: String!, $weight: Float!, $canBorrow: Boolean!) {\n    createQueue(projectId: $projectId, name: $name, weight: $weight, canBorrow: $canBorrow) {\n      ...QueueFields\n    }\n  }\n": typeof types.CreateQueueDocument,
    "\n  mutation UpdateQueue(\n    $queueId: ID!\n    $maxWaitSeconds: Int\n    $defaultRuntimeSeconds: Int\n    $maxRuntimeSeconds: Int\n    $suspendBorrowedDuring: String\n  ) {\n    updateQueue(\n      queueId: $queueId\n      maxWaitSeconds: $maxWaitSeconds\n      defaultRuntimeSeconds: $defaultRuntimeSeconds\n      maxRuntimeSeconds: $maxRuntimeSeconds\n      suspendBorrowedDuring: $suspendBorrowedDuring\n    ) {\n      ...QueueFields\n    }\n  }\n": typeof types.UpdateQueueDocument,
    "\n  mutation UpdateQuota($queueId: ID!, $resource: String!, $guaranteed: Int!, $limit: Int) {\n    updateQuota(queueId: $queueId, resource: $resource, guaranteed: $guaranteed, limit: $limit) {\n      ...QueueFields\n    }\n  }\n": typeof types.UpdateQuotaDocument,
    "\n  mutation SetJobPriority($id: ID!, $priority: String!) {\n    setJobPriority(id: $id, priority: $priority) {\n      id\n      priority\n      priorityClass\n      updatedAt\n    }\n  }\n": typeof types.SetJobPriorityDocument,
    "\n  mutation DryRunJob($input: JobInput!) {\n    dryRunJob(input: $input) {\n      admitted\n      borrowed\n      cluster\n      quotaExceeded {\n        queue\n        resource\n        used\n        demand\n        limit\n      }\n      whyPending {\n        summary\n        reasons {\n          cluster\n          stage\n          reason\n        }\n      }\n    }\n  }\n": typeof types.DryRunJobDocument,
    "\n  subscription ProjectJobEvents($projectId: ID!) {\n    projectJobEvents(projectId: $projectId) {\n      id\n      jobId\n      toState\n    }\n  }\n": typeof types.ProjectJobEventsDocument,
    "\n  subscription JobEvents($jobId: ID!) {\n    jobEvents(jobId: $jobId) {\n      id\n      toState\n    }\n  }\n": typeof types.JobEventsDocument,
    "\n  subscription ClusterUpdates {\n    clusterUpdates {\n      id\n      health\n    }\n  }\n": typeof types.ClusterUpdatesDocument,
    "\n  fragment ClusterFields on Cluster {\n    id\n    displayName\n    health\n    cordoned\n    lastHeartbeat\n    capacityAt\n    agentVersion\n    controlPlaneMismatch\n    capacity {\n      model\n      totalGpus\n      freeWholeGpus\n    }\n    pools {\n      name\n      nodes\n      totalGpus\n      freeWholeGpus\n    }\n    nodes {\n      name\n      healthy\n      rack\n      pool\n      gpus {\n        index\n        model\n        memoryMib\n        healthy\n        allocatedMilli\n        busyPct\n        memoryUsedMib\n        metricsAt\n      }\n    }\n  }\n": typeof types.ClusterFieldsFragmentDoc,
    "\n  query Clusters {\n    clusters {\n      ...ClusterFields\n    }\n  }\n": typeof types.ClustersDocument,
    "\n  query OverviewJobs($first: Int!) {\n    recent: jobs(first: $first) {\n      pageInfo {\n        hasNextPage\n      }\n      nodes {\n        id\n        state\n      }\n    }\n    waiting: jobs(filter: { states: [PENDING, ADMITTED, DISPATCHED, PREEMPTED] }, first: $first) {\n      pageInfo {\n        hasNextPage\n      }\n      nodes {\n        id\n      }\n    }\n  }\n": typeof types.OverviewJobsDocument,
    "\n  query RunningJobs($first: Int!) {\n    jobs(filter: { states: [RUNNING] }, first: $first) {\n      nodes {\n        id\n        name\n        project {\n          slug\n        }\n        replicas {\n          state\n          clusterId\n          node\n          devices\n        }\n      }\n    }\n  }\n": typeof types.RunningJobsDocument,
    "\n  query Usage($period: PeriodInput!, $groupBy: [UsageDimension!], $filter: UsageFilter) {\n    usage(period: $period, groupBy: $groupBy, filter: $filter) {\n      start\n      end\n      asOf\n      currency\n      rows {\n        project\n        queue\n        cluster\n        gpuModel\n        user\n        day\n        gpuHours\n        effectiveCost\n        listCost\n        gpuHoursValue\n        effectiveCostValue\n        charges\n      }\n    }\n  }\n": typeof types.UsageDocument,
    "\n  mutation ExportUsage($period: PeriodInput!, $format: ExportFormat!, $tenantId: ID) {\n    exportUsage(period: $period, format: $format, tenantId: $tenantId) {\n      id\n      format\n      rows\n      bytes\n      sha256\n      downloadUrl\n    }\n  }\n": typeof types.ExportUsageDocument,
    "\n  query PriceBook {\n    priceBook {\n      id\n      gpuModel\n      listPricePerGpuHour\n      contractedPricePerGpuHour\n      currency\n      effectiveFrom\n      effectiveTo\n    }\n  }\n": typeof types.PriceBookDocument,
    "\n  mutation SetPrice(\n    $gpuModel: String!\n    $list: String!\n    $contracted: String\n    $currency: String\n    $from: DateTime!\n    $to: DateTime\n  ) {\n    setPrice(\n      gpuModel: $gpuModel\n      listPricePerGpuHour: $list\n      contractedPricePerGpuHour: $contracted\n      currency: $currency\n      effectiveFrom: $from\n      effectiveTo: $to\n    ) {\n      id\n    }\n  }\n": typeof types.SetPriceDocument,
    "\n  query ApiTokens {\n    apiTokens {\n      id\n      name\n      prefix\n      createdAt\n      expiresAt\n      revokedAt\n      lastUsedAt\n      scopes\n    }\n  }\n": typeof types.ApiTokensDocument,
    "\n  mutation CreateApiToken($name: String!, $days: Int!, $scopes: [TokenScope!]) {\n    createApiToken(name: $name, expiresInDays: $days, scopes: $scopes) {\n      secret\n      id\n      name\n      expiresAt\n    }\n  }\n": typeof types.CreateApiTokenDocument,
    "\n  mutation RevokeApiToken($id: ID!) {\n    revokeApiToken(id: $id) {\n      id\n      revokedAt\n    }\n  }\n": typeof types.RevokeApiTokenDocument,
    "\n  mutation RegisterCluster($id: String!, $displayName: String) {\n    registerCluster(id: $id, displayName: $displayName) {\n      agentToken\n      helmInstallCommand\n      cluster {\n        id\n        displayName\n      }\n    }\n  }\n": typeof types.RegisterClusterDocument,
    "\n  mutation RotateAgentToken($clusterId: String!) {\n    rotateAgentToken(clusterId: $clusterId) {\n      agentToken\n      helmInstallCommand\n      cluster {\n        id\n        displayName\n      }\n    }\n  }\n": typeof types.RotateAgentTokenDocument,
};
const documents: Documents = {
    "\n  query Me {\n    me {\n      id\n      subject\n      email\n      displayName\n      platformAdmin\n    }\n  }\n": types.MeDocument,
    "\n  fragment QueueFields on Queue {\n    id\n    name\n    weight\n    canBorrow\n    maxWaitSeconds\n    defaultRuntimeSeconds\n    maxRuntimeSeconds\n    suspendBorrowedDuring\n    quotas {\n      resource\n      guaranteed\n      limit\n    }\n    usage {\n      resource\n      amount\n    }\n  }\n": types.QueueFieldsFragmentDoc,
    "\n  query Projects {\n    projects {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n    }\n  }\n": types.ProjectsDocument,
    "\n  query Project($slug: String!) {\n    project(slug: $slug) {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n      members {\n        role\n        user {\n          id\n          subject\n          email\n          displayName\n        }\n      }\n    }\n  }\n": types.ProjectDocument,
    "\n  query ProjectJobs($slug: String!, $filter: JobFilterInput, $first: Int!, $after: String) {\n    project(slug: $slug) {\n      id\n      slug\n      myRole\n      queues {\n        id\n        name\n      }\n      jobs(filter: $filter, first: $first, after: $after) {\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n        nodes {\n          id\n          projectId\n          queueId\n          name\n          state\n          priority\n          priorityClass\n          preemptible\n          borrowed\n          submittedBy\n          submitter {\n            id\n            subject\n          }\n          submittedAt\n          updatedAt\n          clusterId\n          tasks {\n            id\n            name\n            replicaCount\n            state\n          }\n        }\n      }\n    }\n  }\n": types.ProjectJobsDocument,
    "\n  query Job($id: ID!) {\n    job(id: $id) {\n      id\n      projectId\n      queueId\n      name\n      priority\n      priorityClass\n      preemptible\n      state\n      borrowed\n      submittedBy\n      submitter {\n        id\n        subject\n        displayName\n      }\n      submittedAt\n      updatedAt\n      clusterId\n      epoch\n      spec\n      whyPending {\n        summary\n        reasons {\n          cluster\n          stage\n          reason\n        }\n      }\n      tasks {\n        id\n        name\n        replicaCount\n        state\n        spec\n      }\n      replicas {\n        id\n        taskId\n        index\n        state\n        node\n        devices\n        clusterId\n        epoch\n        updatedAt\n      }\n      utilization {\n        samples\n        avgBusyPct\n        maxBusyPct\n        lastBusyPct\n        avgMemoryUsedMib\n        maxMemoryUsedMib\n        updatedAt\n      }\n      dispatches {\n        id\n        epoch\n        clusterId\n        dispatchedAt\n        acknowledgedAt\n        outcome\n        reason\n      }\n      events {\n        id\n        taskId\n        replicaId\n        fromState\n        toState\n        cause\n        actor\n        at\n        clusterId\n        epoch\n      }\n    }\n  }\n": types.JobDocument,
    "\n  fragment TenantRightsFields on TenantRights {\n    maxPriorityClass\n    mayPreempt\n    reclaimFromAny\n    reclaimFrom\n  }\n": types.TenantRightsFieldsFragmentDoc,
    "\n  query Tenants {\n    tenants {\n      id\n      slug\n      name\n      createdAt\n      rights {\n        ...TenantRightsFields\n      }\n    }\n  }\n": types.TenantsDocument,
    "\n  mutation SetTenantRights($tenantId: ID!, $maxPriorityClass: String, $mayPreempt: Boolean, $reclaimFromAny: Boolean, $reclaimFrom: [ID!]) {\n    setTenantRights(tenantId: $tenantId, maxPriorityClass: $maxPriorityClass, mayPreempt: $mayPreempt, reclaimFromAny: $reclaimFromAny, reclaimFrom: $reclaimFrom) {\n      id\n      rights {\n        ...TenantRightsFields\n      }\n    }\n  }\n": types.SetTenantRightsDocument,
    "\n  mutation SubmitJob($input: JobInput!) {\n    submitJob(input: $input) {\n      borrowed\n      job {\n        id\n        name\n        state\n      }\n    }\n  }\n": types.SubmitJobDocument,
    "\n  mutation CancelJob($id: ID!) {\n    cancelJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n": types.CancelJobDocument,
    "\n  mutation SuspendJob($id: ID!) {\n    suspendJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n": types.SuspendJobDocument,
    "\n  mutation ResumeJob($id: ID!) {\n    resumeJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n": types.ResumeJobDocument,
    "\n  mutation CreateTenant($slug: String!, $name: String!) {\n    createTenant(slug: $slug, name: $name) {\n      id\n      slug\n      name\n      createdAt\n      rights {\n        ...TenantRightsFields\n      }\n    }\n  }\n": types.CreateTenantDocument,
    "\n  mutation CreateProject($tenantId: ID!, $slug: String!, $name: String!) {\n    createProject(tenantId: $tenantId, slug: $slug, name: $name) {\n      id\n      slug\n      name\n    }\n  }\n": types.CreateProjectDocument,
    "\n  mutation AddMember($projectId: ID!, $subject: String!, $role: ProjectRole!) {\n    addMember(projectId: $projectId, subject: $subject, role: $role)\n  }\n": types.AddMemberDocument,
    "\n  mutation CreateQueue($projectId: ID!, $name: String!, $weight: Float!, $canBorrow: Boolean!) {\n    createQueue(projectId: $projectId, name: $name, weight: $weight, canBorrow: $canBorrow) {\n      ...QueueFields\n    }\n  }\n": types.CreateQueueDocument,
    "\n  mutation UpdateQueue(\n    $queueId: ID!\n    $maxWaitSeconds: Int\n    $defaultRuntimeSeconds: Int\n    $maxRuntimeSeconds: Int\n    $suspendBorrowedDuring: String\n  ) {\n    updateQueue(\n      queueId: $queueId\n      maxWaitSeconds: $maxWaitSeconds\n      defaultRuntimeSeconds: $defaultRuntimeSeconds\n      maxRuntimeSeconds: $maxRuntimeSeconds\n      suspendBorrowedDuring: $suspendBorrowedDuring\n    ) {\n      ...QueueFields\n    }\n  }\n": types.UpdateQueueDocument,
    "\n  mutation UpdateQuota($queueId: ID!, $resource: String!, $guaranteed: Int!, $limit: Int) {\n    updateQuota(queueId: $queueId, resource: $resource, guaranteed: $guaranteed, limit: $limit) {\n      ...QueueFields\n    }\n  }\n": types.UpdateQuotaDocument,
    "\n  mutation SetJobPriority($id: ID!, $priority: String!) {\n    setJobPriority(id: $id, priority: $priority) {\n      id\n      priority\n      priorityClass\n      updatedAt\n    }\n  }\n": types.SetJobPriorityDocument,
    "\n  mutation DryRunJob($input: JobInput!) {\n    dryRunJob(input: $input) {\n      admitted\n      borrowed\n      cluster\n      quotaExceeded {\n        queue\n        resource\n        used\n        demand\n        limit\n      }\n      whyPending {\n        summary\n        reasons {\n          cluster\n          stage\n          reason\n        }\n      }\n    }\n  }\n": types.DryRunJobDocument,
    "\n  subscription ProjectJobEvents($projectId: ID!) {\n    projectJobEvents(projectId: $projectId) {\n      id\n      jobId\n      toState\n    }\n  }\n": types.ProjectJobEventsDocument,
    "\n  subscription JobEvents($jobId: ID!) {\n    jobEvents(jobId: $jobId) {\n      id\n      toState\n    }\n  }\n": types.JobEventsDocument,
    "\n  subscription ClusterUpdates {\n    clusterUpdates {\n      id\n      health\n    }\n  }\n": types.ClusterUpdatesDocument,
    "\n  fragment ClusterFields on Cluster {\n    id\n    displayName\n    health\n    cordoned\n    lastHeartbeat\n    capacityAt\n    agentVersion\n    controlPlaneMismatch\n    capacity {\n      model\n      totalGpus\n      freeWholeGpus\n    }\n    pools {\n      name\n      nodes\n      totalGpus\n      freeWholeGpus\n    }\n    nodes {\n      name\n      healthy\n      rack\n      pool\n      gpus {\n        index\n        model\n        memoryMib\n        healthy\n        allocatedMilli\n        busyPct\n        memoryUsedMib\n        metricsAt\n      }\n    }\n  }\n": types.ClusterFieldsFragmentDoc,
    "\n  query Clusters {\n    clusters {\n      ...ClusterFields\n    }\n  }\n": types.ClustersDocument,
    "\n  query OverviewJobs($first: Int!) {\n    recent: jobs(first: $first) {\n      pageInfo {\n        hasNextPage\n      }\n      nodes {\n        id\n        state\n      }\n    }\n    waiting: jobs(filter: { states: [PENDING, ADMITTED, DISPATCHED, PREEMPTED] }, first: $first) {\n      pageInfo {\n        hasNextPage\n      }\n      nodes {\n        id\n      }\n    }\n  }\n": types.OverviewJobsDocument,
    "\n  query RunningJobs($first: Int!) {\n    jobs(filter: { states: [RUNNING] }, first: $first) {\n      nodes {\n        id\n        name\n        project {\n          slug\n        }\n        replicas {\n          state\n          clusterId\n          node\n          devices\n        }\n      }\n    }\n  }\n": types.RunningJobsDocument,
    "\n  query Usage($period: PeriodInput!, $groupBy: [UsageDimension!], $filter: UsageFilter) {\n    usage(period: $period, groupBy: $groupBy, filter: $filter) {\n      start\n      end\n      asOf\n      currency\n      rows {\n        project\n        queue\n        cluster\n        gpuModel\n        user\n        day\n        gpuHours\n        effectiveCost\n        listCost\n        gpuHoursValue\n        effectiveCostValue\n        charges\n      }\n    }\n  }\n": types.UsageDocument,
    "\n  mutation ExportUsage($period: PeriodInput!, $format: ExportFormat!, $tenantId: ID) {\n    exportUsage(period: $period, format: $format, tenantId: $tenantId) {\n      id\n      format\n      rows\n      bytes\n      sha256\n      downloadUrl\n    }\n  }\n": types.ExportUsageDocument,
    "\n  query PriceBook {\n    priceBook {\n      id\n      gpuModel\n      listPricePerGpuHour\n      contractedPricePerGpuHour\n      currency\n      effectiveFrom\n      effectiveTo\n    }\n  }\n": types.PriceBookDocument,
    "\n  mutation SetPrice(\n    $gpuModel: String!\n    $list: String!\n    $contracted: String\n    $currency: String\n    $from: DateTime!\n    $to: DateTime\n  ) {\n    setPrice(\n      gpuModel: $gpuModel\n      listPricePerGpuHour: $list\n      contractedPricePerGpuHour: $contracted\n      currency: $currency\n      effectiveFrom: $from\n      effectiveTo: $to\n    ) {\n      id\n    }\n  }\n": types.SetPriceDocument,
    "\n  query ApiTokens {\n    apiTokens {\n      id\n      name\n      prefix\n      createdAt\n      expiresAt\n      revokedAt\n      lastUsedAt\n      scopes\n    }\n  }\n": types.ApiTokensDocument,
    "\n  mutation CreateApiToken($name: String!, $days: Int!, $scopes: [TokenScope!]) {\n    createApiToken(name: $name, expiresInDays: $days, scopes: $scopes) {\n      secret\n      id\n      name\n      expiresAt\n    }\n  }\n": types.CreateApiTokenDocument,
    "\n  mutation RevokeApiToken($id: ID!) {\n    revokeApiToken(id: $id) {\n      id\n      revokedAt\n    }\n  }\n": types.RevokeApiTokenDocument,
    "\n  mutation RegisterCluster($id: String!, $displayName: String) {\n    registerCluster(id: $id, displayName: $displayName) {\n      agentToken\n      helmInstallCommand\n      cluster {\n        id\n        displayName\n      }\n    }\n  }\n": types.RegisterClusterDocument,
    "\n  mutation RotateAgentToken($clusterId: String!) {\n    rotateAgentToken(clusterId: $clusterId) {\n      agentToken\n      helmInstallCommand\n      cluster {\n        id\n        displayName\n      }\n    }\n  }\n": types.RotateAgentTokenDocument,
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
export function graphql(source: "\n  fragment QueueFields on Queue {\n    id\n    name\n    weight\n    canBorrow\n    maxWaitSeconds\n    defaultRuntimeSeconds\n    maxRuntimeSeconds\n    suspendBorrowedDuring\n    quotas {\n      resource\n      guaranteed\n      limit\n    }\n    usage {\n      resource\n      amount\n    }\n  }\n"): (typeof documents)["\n  fragment QueueFields on Queue {\n    id\n    name\n    weight\n    canBorrow\n    maxWaitSeconds\n    defaultRuntimeSeconds\n    maxRuntimeSeconds\n    suspendBorrowedDuring\n    quotas {\n      resource\n      guaranteed\n      limit\n    }\n    usage {\n      resource\n      amount\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Projects {\n    projects {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query Projects {\n    projects {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Project($slug: String!) {\n    project(slug: $slug) {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n      members {\n        role\n        user {\n          id\n          subject\n          email\n          displayName\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query Project($slug: String!) {\n    project(slug: $slug) {\n      id\n      tenantId\n      slug\n      name\n      myRole\n      createdAt\n      queues {\n        ...QueueFields\n      }\n      members {\n        role\n        user {\n          id\n          subject\n          email\n          displayName\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ProjectJobs($slug: String!, $filter: JobFilterInput, $first: Int!, $after: String) {\n    project(slug: $slug) {\n      id\n      slug\n      myRole\n      queues {\n        id\n        name\n      }\n      jobs(filter: $filter, first: $first, after: $after) {\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n        nodes {\n          id\n          projectId\n          queueId\n          name\n          state\n          priority\n          priorityClass\n          preemptible\n          borrowed\n          submittedBy\n          submitter {\n            id\n            subject\n          }\n          submittedAt\n          updatedAt\n          clusterId\n          tasks {\n            id\n            name\n            replicaCount\n            state\n          }\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query ProjectJobs($slug: String!, $filter: JobFilterInput, $first: Int!, $after: String) {\n    project(slug: $slug) {\n      id\n      slug\n      myRole\n      queues {\n        id\n        name\n      }\n      jobs(filter: $filter, first: $first, after: $after) {\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n        nodes {\n          id\n          projectId\n          queueId\n          name\n          state\n          priority\n          priorityClass\n          preemptible\n          borrowed\n          submittedBy\n          submitter {\n            id\n            subject\n          }\n          submittedAt\n          updatedAt\n          clusterId\n          tasks {\n            id\n            name\n            replicaCount\n            state\n          }\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Job($id: ID!) {\n    job(id: $id) {\n      id\n      projectId\n      queueId\n      name\n      priority\n      priorityClass\n      preemptible\n      state\n      borrowed\n      submittedBy\n      submitter {\n        id\n        subject\n        displayName\n      }\n      submittedAt\n      updatedAt\n      clusterId\n      epoch\n      spec\n      whyPending {\n        summary\n        reasons {\n          cluster\n          stage\n          reason\n        }\n      }\n      tasks {\n        id\n        name\n        replicaCount\n        state\n        spec\n      }\n      replicas {\n        id\n        taskId\n        index\n        state\n        node\n        devices\n        clusterId\n        epoch\n        updatedAt\n      }\n      utilization {\n        samples\n        avgBusyPct\n        maxBusyPct\n        lastBusyPct\n        avgMemoryUsedMib\n        maxMemoryUsedMib\n        updatedAt\n      }\n      dispatches {\n        id\n        epoch\n        clusterId\n        dispatchedAt\n        acknowledgedAt\n        outcome\n        reason\n      }\n      events {\n        id\n        taskId\n        replicaId\n        fromState\n        toState\n        cause\n        actor\n        at\n        clusterId\n        epoch\n      }\n    }\n  }\n"): (typeof documents)["\n  query Job($id: ID!) {\n    job(id: $id) {\n      id\n      projectId\n      queueId\n      name\n      priority\n      priorityClass\n      preemptible\n      state\n      borrowed\n      submittedBy\n      submitter {\n        id\n        subject\n        displayName\n      }\n      submittedAt\n      updatedAt\n      clusterId\n      epoch\n      spec\n      whyPending {\n        summary\n        reasons {\n          cluster\n          stage\n          reason\n        }\n      }\n      tasks {\n        id\n        name\n        replicaCount\n        state\n        spec\n      }\n      replicas {\n        id\n        taskId\n        index\n        state\n        node\n        devices\n        clusterId\n        epoch\n        updatedAt\n      }\n      utilization {\n        samples\n        avgBusyPct\n        maxBusyPct\n        lastBusyPct\n        avgMemoryUsedMib\n        maxMemoryUsedMib\n        updatedAt\n      }\n      dispatches {\n        id\n        epoch\n        clusterId\n        dispatchedAt\n        acknowledgedAt\n        outcome\n        reason\n      }\n      events {\n        id\n        taskId\n        replicaId\n        fromState\n        toState\n        cause\n        actor\n        at\n        clusterId\n        epoch\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment TenantRightsFields on TenantRights {\n    maxPriorityClass\n    mayPreempt\n    reclaimFromAny\n    reclaimFrom\n  }\n"): (typeof documents)["\n  fragment TenantRightsFields on TenantRights {\n    maxPriorityClass\n    mayPreempt\n    reclaimFromAny\n    reclaimFrom\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Tenants {\n    tenants {\n      id\n      slug\n      name\n      createdAt\n      rights {\n        ...TenantRightsFields\n      }\n    }\n  }\n"): (typeof documents)["\n  query Tenants {\n    tenants {\n      id\n      slug\n      name\n      createdAt\n      rights {\n        ...TenantRightsFields\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetTenantRights($tenantId: ID!, $maxPriorityClass: String, $mayPreempt: Boolean, $reclaimFromAny: Boolean, $reclaimFrom: [ID!]) {\n    setTenantRights(tenantId: $tenantId, maxPriorityClass: $maxPriorityClass, mayPreempt: $mayPreempt, reclaimFromAny: $reclaimFromAny, reclaimFrom: $reclaimFrom) {\n      id\n      rights {\n        ...TenantRightsFields\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation SetTenantRights($tenantId: ID!, $maxPriorityClass: String, $mayPreempt: Boolean, $reclaimFromAny: Boolean, $reclaimFrom: [ID!]) {\n    setTenantRights(tenantId: $tenantId, maxPriorityClass: $maxPriorityClass, mayPreempt: $mayPreempt, reclaimFromAny: $reclaimFromAny, reclaimFrom: $reclaimFrom) {\n      id\n      rights {\n        ...TenantRightsFields\n      }\n    }\n  }\n"];
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
export function graphql(source: "\n  mutation SuspendJob($id: ID!) {\n    suspendJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n"): (typeof documents)["\n  mutation SuspendJob($id: ID!) {\n    suspendJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ResumeJob($id: ID!) {\n    resumeJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n"): (typeof documents)["\n  mutation ResumeJob($id: ID!) {\n    resumeJob(id: $id) {\n      id\n      state\n      updatedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateTenant($slug: String!, $name: String!) {\n    createTenant(slug: $slug, name: $name) {\n      id\n      slug\n      name\n      createdAt\n      rights {\n        ...TenantRightsFields\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation CreateTenant($slug: String!, $name: String!) {\n    createTenant(slug: $slug, name: $name) {\n      id\n      slug\n      name\n      createdAt\n      rights {\n        ...TenantRightsFields\n      }\n    }\n  }\n"];
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
export function graphql(source: "\n  mutation UpdateQueue(\n    $queueId: ID!\n    $maxWaitSeconds: Int\n    $defaultRuntimeSeconds: Int\n    $maxRuntimeSeconds: Int\n    $suspendBorrowedDuring: String\n  ) {\n    updateQueue(\n      queueId: $queueId\n      maxWaitSeconds: $maxWaitSeconds\n      defaultRuntimeSeconds: $defaultRuntimeSeconds\n      maxRuntimeSeconds: $maxRuntimeSeconds\n      suspendBorrowedDuring: $suspendBorrowedDuring\n    ) {\n      ...QueueFields\n    }\n  }\n"): (typeof documents)["\n  mutation UpdateQueue(\n    $queueId: ID!\n    $maxWaitSeconds: Int\n    $defaultRuntimeSeconds: Int\n    $maxRuntimeSeconds: Int\n    $suspendBorrowedDuring: String\n  ) {\n    updateQueue(\n      queueId: $queueId\n      maxWaitSeconds: $maxWaitSeconds\n      defaultRuntimeSeconds: $defaultRuntimeSeconds\n      maxRuntimeSeconds: $maxRuntimeSeconds\n      suspendBorrowedDuring: $suspendBorrowedDuring\n    ) {\n      ...QueueFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateQuota($queueId: ID!, $resource: String!, $guaranteed: Int!, $limit: Int) {\n    updateQuota(queueId: $queueId, resource: $resource, guaranteed: $guaranteed, limit: $limit) {\n      ...QueueFields\n    }\n  }\n"): (typeof documents)["\n  mutation UpdateQuota($queueId: ID!, $resource: String!, $guaranteed: Int!, $limit: Int) {\n    updateQuota(queueId: $queueId, resource: $resource, guaranteed: $guaranteed, limit: $limit) {\n      ...QueueFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetJobPriority($id: ID!, $priority: String!) {\n    setJobPriority(id: $id, priority: $priority) {\n      id\n      priority\n      priorityClass\n      updatedAt\n    }\n  }\n"): (typeof documents)["\n  mutation SetJobPriority($id: ID!, $priority: String!) {\n    setJobPriority(id: $id, priority: $priority) {\n      id\n      priority\n      priorityClass\n      updatedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation DryRunJob($input: JobInput!) {\n    dryRunJob(input: $input) {\n      admitted\n      borrowed\n      cluster\n      quotaExceeded {\n        queue\n        resource\n        used\n        demand\n        limit\n      }\n      whyPending {\n        summary\n        reasons {\n          cluster\n          stage\n          reason\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation DryRunJob($input: JobInput!) {\n    dryRunJob(input: $input) {\n      admitted\n      borrowed\n      cluster\n      quotaExceeded {\n        queue\n        resource\n        used\n        demand\n        limit\n      }\n      whyPending {\n        summary\n        reasons {\n          cluster\n          stage\n          reason\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ProjectJobEvents($projectId: ID!) {\n    projectJobEvents(projectId: $projectId) {\n      id\n      jobId\n      toState\n    }\n  }\n"): (typeof documents)["\n  subscription ProjectJobEvents($projectId: ID!) {\n    projectJobEvents(projectId: $projectId) {\n      id\n      jobId\n      toState\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription JobEvents($jobId: ID!) {\n    jobEvents(jobId: $jobId) {\n      id\n      toState\n    }\n  }\n"): (typeof documents)["\n  subscription JobEvents($jobId: ID!) {\n    jobEvents(jobId: $jobId) {\n      id\n      toState\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  subscription ClusterUpdates {\n    clusterUpdates {\n      id\n      health\n    }\n  }\n"): (typeof documents)["\n  subscription ClusterUpdates {\n    clusterUpdates {\n      id\n      health\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment ClusterFields on Cluster {\n    id\n    displayName\n    health\n    cordoned\n    lastHeartbeat\n    capacityAt\n    agentVersion\n    controlPlaneMismatch\n    capacity {\n      model\n      totalGpus\n      freeWholeGpus\n    }\n    pools {\n      name\n      nodes\n      totalGpus\n      freeWholeGpus\n    }\n    nodes {\n      name\n      healthy\n      rack\n      pool\n      gpus {\n        index\n        model\n        memoryMib\n        healthy\n        allocatedMilli\n        busyPct\n        memoryUsedMib\n        metricsAt\n      }\n    }\n  }\n"): (typeof documents)["\n  fragment ClusterFields on Cluster {\n    id\n    displayName\n    health\n    cordoned\n    lastHeartbeat\n    capacityAt\n    agentVersion\n    controlPlaneMismatch\n    capacity {\n      model\n      totalGpus\n      freeWholeGpus\n    }\n    pools {\n      name\n      nodes\n      totalGpus\n      freeWholeGpus\n    }\n    nodes {\n      name\n      healthy\n      rack\n      pool\n      gpus {\n        index\n        model\n        memoryMib\n        healthy\n        allocatedMilli\n        busyPct\n        memoryUsedMib\n        metricsAt\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Clusters {\n    clusters {\n      ...ClusterFields\n    }\n  }\n"): (typeof documents)["\n  query Clusters {\n    clusters {\n      ...ClusterFields\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query OverviewJobs($first: Int!) {\n    recent: jobs(first: $first) {\n      pageInfo {\n        hasNextPage\n      }\n      nodes {\n        id\n        state\n      }\n    }\n    waiting: jobs(filter: { states: [PENDING, ADMITTED, DISPATCHED, PREEMPTED] }, first: $first) {\n      pageInfo {\n        hasNextPage\n      }\n      nodes {\n        id\n      }\n    }\n  }\n"): (typeof documents)["\n  query OverviewJobs($first: Int!) {\n    recent: jobs(first: $first) {\n      pageInfo {\n        hasNextPage\n      }\n      nodes {\n        id\n        state\n      }\n    }\n    waiting: jobs(filter: { states: [PENDING, ADMITTED, DISPATCHED, PREEMPTED] }, first: $first) {\n      pageInfo {\n        hasNextPage\n      }\n      nodes {\n        id\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query RunningJobs($first: Int!) {\n    jobs(filter: { states: [RUNNING] }, first: $first) {\n      nodes {\n        id\n        name\n        project {\n          slug\n        }\n        replicas {\n          state\n          clusterId\n          node\n          devices\n        }\n      }\n    }\n  }\n"): (typeof documents)["\n  query RunningJobs($first: Int!) {\n    jobs(filter: { states: [RUNNING] }, first: $first) {\n      nodes {\n        id\n        name\n        project {\n          slug\n        }\n        replicas {\n          state\n          clusterId\n          node\n          devices\n        }\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Usage($period: PeriodInput!, $groupBy: [UsageDimension!], $filter: UsageFilter) {\n    usage(period: $period, groupBy: $groupBy, filter: $filter) {\n      start\n      end\n      asOf\n      currency\n      rows {\n        project\n        queue\n        cluster\n        gpuModel\n        user\n        day\n        gpuHours\n        effectiveCost\n        listCost\n        gpuHoursValue\n        effectiveCostValue\n        charges\n      }\n    }\n  }\n"): (typeof documents)["\n  query Usage($period: PeriodInput!, $groupBy: [UsageDimension!], $filter: UsageFilter) {\n    usage(period: $period, groupBy: $groupBy, filter: $filter) {\n      start\n      end\n      asOf\n      currency\n      rows {\n        project\n        queue\n        cluster\n        gpuModel\n        user\n        day\n        gpuHours\n        effectiveCost\n        listCost\n        gpuHoursValue\n        effectiveCostValue\n        charges\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation ExportUsage($period: PeriodInput!, $format: ExportFormat!, $tenantId: ID) {\n    exportUsage(period: $period, format: $format, tenantId: $tenantId) {\n      id\n      format\n      rows\n      bytes\n      sha256\n      downloadUrl\n    }\n  }\n"): (typeof documents)["\n  mutation ExportUsage($period: PeriodInput!, $format: ExportFormat!, $tenantId: ID) {\n    exportUsage(period: $period, format: $format, tenantId: $tenantId) {\n      id\n      format\n      rows\n      bytes\n      sha256\n      downloadUrl\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query PriceBook {\n    priceBook {\n      id\n      gpuModel\n      listPricePerGpuHour\n      contractedPricePerGpuHour\n      currency\n      effectiveFrom\n      effectiveTo\n    }\n  }\n"): (typeof documents)["\n  query PriceBook {\n    priceBook {\n      id\n      gpuModel\n      listPricePerGpuHour\n      contractedPricePerGpuHour\n      currency\n      effectiveFrom\n      effectiveTo\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetPrice(\n    $gpuModel: String!\n    $list: String!\n    $contracted: String\n    $currency: String\n    $from: DateTime!\n    $to: DateTime\n  ) {\n    setPrice(\n      gpuModel: $gpuModel\n      listPricePerGpuHour: $list\n      contractedPricePerGpuHour: $contracted\n      currency: $currency\n      effectiveFrom: $from\n      effectiveTo: $to\n    ) {\n      id\n    }\n  }\n"): (typeof documents)["\n  mutation SetPrice(\n    $gpuModel: String!\n    $list: String!\n    $contracted: String\n    $currency: String\n    $from: DateTime!\n    $to: DateTime\n  ) {\n    setPrice(\n      gpuModel: $gpuModel\n      listPricePerGpuHour: $list\n      contractedPricePerGpuHour: $contracted\n      currency: $currency\n      effectiveFrom: $from\n      effectiveTo: $to\n    ) {\n      id\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query ApiTokens {\n    apiTokens {\n      id\n      name\n      prefix\n      createdAt\n      expiresAt\n      revokedAt\n      lastUsedAt\n      scopes\n    }\n  }\n"): (typeof documents)["\n  query ApiTokens {\n    apiTokens {\n      id\n      name\n      prefix\n      createdAt\n      expiresAt\n      revokedAt\n      lastUsedAt\n      scopes\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation CreateApiToken($name: String!, $days: Int!, $scopes: [TokenScope!]) {\n    createApiToken(name: $name, expiresInDays: $days, scopes: $scopes) {\n      secret\n      id\n      name\n      expiresAt\n    }\n  }\n"): (typeof documents)["\n  mutation CreateApiToken($name: String!, $days: Int!, $scopes: [TokenScope!]) {\n    createApiToken(name: $name, expiresInDays: $days, scopes: $scopes) {\n      secret\n      id\n      name\n      expiresAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RevokeApiToken($id: ID!) {\n    revokeApiToken(id: $id) {\n      id\n      revokedAt\n    }\n  }\n"): (typeof documents)["\n  mutation RevokeApiToken($id: ID!) {\n    revokeApiToken(id: $id) {\n      id\n      revokedAt\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RegisterCluster($id: String!, $displayName: String) {\n    registerCluster(id: $id, displayName: $displayName) {\n      agentToken\n      helmInstallCommand\n      cluster {\n        id\n        displayName\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation RegisterCluster($id: String!, $displayName: String) {\n    registerCluster(id: $id, displayName: $displayName) {\n      agentToken\n      helmInstallCommand\n      cluster {\n        id\n        displayName\n      }\n    }\n  }\n"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RotateAgentToken($clusterId: String!) {\n    rotateAgentToken(clusterId: $clusterId) {\n      agentToken\n      helmInstallCommand\n      cluster {\n        id\n        displayName\n      }\n    }\n  }\n"): (typeof documents)["\n  mutation RotateAgentToken($clusterId: String!) {\n    rotateAgentToken(clusterId: $clusterId) {\n      agentToken\n      helmInstallCommand\n      cluster {\n        id\n        displayName\n      }\n    }\n  }\n"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;