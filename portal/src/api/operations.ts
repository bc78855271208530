// Every operation the pages use, typed by `npm run codegen` from ../api/schema.graphql.
import { graphql } from '../gql';

export const MeQuery = graphql(`
  query Me {
    me {
      id
      subject
      email
      displayName
      platformAdmin
    }
  }
`);

export const QueueFields = graphql(`
  fragment QueueFields on Queue {
    id
    name
    weight
    canBorrow
    maxWaitSeconds
    defaultRuntimeSeconds
    maxRuntimeSeconds
    suspendBorrowedDuring
    interactiveReserveGpus
    fairShare {
      fairGpus
      heldGpus
    }
    poolWeights {
      pool
      weight
    }
    quotas {
      resource
      guaranteed
      limit
    }
    usage {
      resource
      amount
    }
  }
`);

export const ProjectsQuery = graphql(`
  query Projects {
    projects {
      id
      tenantId
      slug
      name
      myRole
      createdAt
      queues {
        ...QueueFields
      }
    }
  }
`);

export const ProjectQuery = graphql(`
  query Project($slug: String!) {
    project(slug: $slug) {
      id
      tenantId
      slug
      name
      myRole
      createdAt
      share {
        ...ShareFields
      }
      budget {
        ...BudgetFields
      }
      queues {
        ...QueueFields
      }
      members {
        role
        user {
          id
          subject
          email
          displayName
        }
      }
    }
  }
`);

export const ProjectJobsQuery = graphql(`
  query ProjectJobs($slug: String!, $filter: JobFilterInput, $first: Int!, $after: String) {
    project(slug: $slug) {
      id
      slug
      myRole
      queues {
        id
        name
      }
      jobs(filter: $filter, first: $first, after: $after) {
        pageInfo {
          hasNextPage
          endCursor
        }
        nodes {
          id
          projectId
          queueId
          name
          state
          priority
          priorityClass
          preemptible
          borrowed
          submittedBy
          submitter {
            id
            subject
          }
          submittedAt
          updatedAt
          clusterId
          tasks {
            id
            name
            replicaCount
            state
          }
        }
      }
    }
  }
`);

export const JobQuery = graphql(`
  query Job($id: ID!) {
    job(id: $id) {
      id
      projectId
      queueId
      name
      priority
      priorityClass
      preemptible
      state
      borrowed
      submittedBy
      submitter {
        id
        subject
        displayName
      }
      submittedAt
      updatedAt
      clusterId
      epoch
      workloadType
      endpoint
      queuePosition
      estimatedStart {
        at
        jobsAhead
      }
      predictedRuntime {
        p50Seconds
        p90Seconds
        samples
        basis
      }
      projectSlug
      queueName
      workspace {
        port
        idleTimeoutSeconds
        idleAction
      }
      spec
      whyPending {
        summary
        reasons {
          cluster
          stage
          reason
        }
      }
      tasks {
        id
        name
        replicaCount
        state
        spec
      }
      replicas {
        id
        taskId
        index
        state
        node
        devices
        clusterId
        epoch
        updatedAt
        exitCode
        termination
        usage {
          cpuCores
          memoryMib
          diskReadBps
          diskWriteBps
          netRxBps
          netTxBps
          at
        }
      }
      utilization {
        samples
        avgBusyPct
        maxBusyPct
        lastBusyPct
        avgMemoryUsedMib
        maxMemoryUsedMib
        updatedAt
        usageSamples
        avgCpuCores
        maxCpuCores
        avgMemoryMib
        maxMemoryMib
      }
      dispatches {
        id
        epoch
        clusterId
        dispatchedAt
        acknowledgedAt
        outcome
        reason
      }
      events {
        id
        taskId
        replicaId
        fromState
        toState
        cause
        actor
        actorName
        at
        clusterId
        epoch
      }
    }
  }
`);

export const TenantRightsFields = graphql(`
  fragment TenantRightsFields on TenantRights {
    maxPriorityClass
    mayPreempt
    reclaimFromAny
    reclaimFrom
  }
`);

export const ShareFieldsFragment = graphql(`
  fragment ShareFields on ShareSettings {
    weight
    guarantees {
      resource
      amount
    }
    limits {
      resource
      amount
    }
  }
`);

export const TenantsQuery = graphql(`
  query Tenants {
    tenants {
      id
      slug
      name
      createdAt
      myRole
      rights {
        ...TenantRightsFields
      }
      share {
        ...ShareFields
      }
    }
  }
`);

export const SetTenantShareMutation = graphql(`
  mutation SetTenantShare($tenantId: ID!, $weight: Float, $guarantees: [ResourceAmountInput!], $limits: [ResourceAmountInput!]) {
    setTenantShare(tenantId: $tenantId, weight: $weight, guarantees: $guarantees, limits: $limits) {
      id
      share {
        ...ShareFields
      }
    }
  }
`);

export const SetProjectShareMutation = graphql(`
  mutation SetProjectShare($projectId: ID!, $weight: Float, $guarantees: [ResourceAmountInput!], $limits: [ResourceAmountInput!]) {
    setProjectShare(projectId: $projectId, weight: $weight, guarantees: $guarantees, limits: $limits) {
      id
      share {
        ...ShareFields
      }
    }
  }
`);

export const SetTenantRightsMutation = graphql(`
  mutation SetTenantRights($tenantId: ID!, $maxPriorityClass: String, $mayPreempt: Boolean, $reclaimFromAny: Boolean, $reclaimFrom: [ID!]) {
    setTenantRights(tenantId: $tenantId, maxPriorityClass: $maxPriorityClass, mayPreempt: $mayPreempt, reclaimFromAny: $reclaimFromAny, reclaimFrom: $reclaimFrom) {
      id
      rights {
        ...TenantRightsFields
      }
    }
  }
`);

export const SubmitJobMutation = graphql(`
  mutation SubmitJob($input: JobInput!) {
    submitJob(input: $input) {
      borrowed
      budgetWarning
      job {
        id
        name
        state
      }
    }
  }
`);

export const CancelJobMutation = graphql(`
  mutation CancelJob($id: ID!) {
    cancelJob(id: $id) {
      id
      state
      updatedAt
    }
  }
`);

export const SuspendJobMutation = graphql(`
  mutation SuspendJob($id: ID!) {
    suspendJob(id: $id) {
      id
      state
      updatedAt
    }
  }
`);

export const ResumeJobMutation = graphql(`
  mutation ResumeJob($id: ID!) {
    resumeJob(id: $id) {
      id
      state
      updatedAt
    }
  }
`);

export const CreateTenantMutation = graphql(`
  mutation CreateTenant($slug: String!, $name: String!) {
    createTenant(slug: $slug, name: $name) {
      id
      slug
      name
      createdAt
      rights {
        ...TenantRightsFields
      }
    }
  }
`);

export const CreateProjectMutation = graphql(`
  mutation CreateProject($tenantId: ID!, $slug: String!, $name: String!) {
    createProject(tenantId: $tenantId, slug: $slug, name: $name) {
      id
      slug
      name
    }
  }
`);

export const AddMemberMutation = graphql(`
  mutation AddMember($projectId: ID!, $subject: String!, $role: ProjectRole!) {
    addMember(projectId: $projectId, subject: $subject, role: $role)
  }
`);

export const CreateQueueMutation = graphql(`
  mutation CreateQueue($projectId: ID!, $name: String!, $weight: Float!, $canBorrow: Boolean!) {
    createQueue(projectId: $projectId, name: $name, weight: $weight, canBorrow: $canBorrow) {
      ...QueueFields
    }
  }
`);

export const UpdateQueueMutation = graphql(`
  mutation UpdateQueue(
    $queueId: ID!
    $maxWaitSeconds: Int
    $defaultRuntimeSeconds: Int
    $maxRuntimeSeconds: Int
    $suspendBorrowedDuring: String
    $poolWeights: [PoolWeightInput!]
    $interactiveReserveGpus: Float
  ) {
    updateQueue(
      queueId: $queueId
      maxWaitSeconds: $maxWaitSeconds
      defaultRuntimeSeconds: $defaultRuntimeSeconds
      maxRuntimeSeconds: $maxRuntimeSeconds
      suspendBorrowedDuring: $suspendBorrowedDuring
      poolWeights: $poolWeights
      interactiveReserveGpus: $interactiveReserveGpus
    ) {
      ...QueueFields
    }
  }
`);

export const UpdateQuotaMutation = graphql(`
  mutation UpdateQuota($queueId: ID!, $resource: String!, $guaranteed: Int!, $limit: Int) {
    updateQuota(queueId: $queueId, resource: $resource, guaranteed: $guaranteed, limit: $limit) {
      ...QueueFields
    }
  }
`);

export const SetJobPriorityMutation = graphql(`
  mutation SetJobPriority($id: ID!, $priority: String!) {
    setJobPriority(id: $id, priority: $priority) {
      id
      priority
      priorityClass
      updatedAt
    }
  }
`);

export const DryRunJobMutation = graphql(`
  mutation DryRunJob($input: JobInput!) {
    dryRunJob(input: $input) {
      admitted
      borrowed
      cluster
      quotaExceeded {
        queue
        resource
        used
        demand
        limit
      }
      whyPending {
        summary
        reasons {
          cluster
          stage
          reason
        }
      }
    }
  }
`);

/** Live: every job event of one project (the jobs table refetches on each). */
export const ProjectJobEventsSubscription = graphql(`
  subscription ProjectJobEvents($projectId: ID!) {
    projectJobEvents(projectId: $projectId) {
      id
      jobId
      toState
    }
  }
`);

/** Live: the events of one job (the job page refetches on each). */
export const JobEventsSubscription = graphql(`
  subscription JobEvents($jobId: ID!) {
    jobEvents(jobId: $jobId) {
      id
      toState
    }
  }
`);

/** Live: a cluster's capacity, health or cordon changed. */
export const ClusterUpdatesSubscription = graphql(`
  subscription ClusterUpdates {
    clusterUpdates {
      id
      health
    }
  }
`);

export const ClusterFields = graphql(`
  fragment ClusterFields on Cluster {
    id
    displayName
    health
    cordoned
    draining
    lastHeartbeat
    capacityAt
    agentVersion
    controlPlaneMismatch
    capacity {
      model
      totalGpus
      freeWholeGpus
    }
    pools {
      name
      nodes
      totalGpus
      freeWholeGpus
    }
    nodes {
      name
      healthy
      cordoned
      draining
      rack
      pool
      gpus {
        index
        model
        memoryMib
        healthy
        allocatedMilli
        busyPct
        memoryUsedMib
        metricsAt
      }
    }
  }
`);

export const ClustersQuery = graphql(`
  query Clusters {
    clusters {
      ...ClusterFields
    }
  }
`);

/** Job counts for the overview: the newest jobs by state, and the waiting ones. */
export const OverviewJobsQuery = graphql(`
  query OverviewJobs($first: Int!) {
    recent: jobs(first: $first) {
      pageInfo {
        hasNextPage
      }
      nodes {
        id
        state
      }
    }
    waiting: jobs(filter: { states: [PENDING, ADMITTED, DISPATCHED, PREEMPTED] }, first: $first) {
      pageInfo {
        hasNextPage
      }
      nodes {
        id
      }
    }
  }
`);

/** Running jobs with where their replicas sit: names the job holding an idle GPU. */
export const RunningJobsQuery = graphql(`
  query RunningJobs($first: Int!) {
    jobs(filter: { states: [RUNNING] }, first: $first) {
      nodes {
        id
        name
        project {
          slug
        }
        replicas {
          state
          clusterId
          node
          devices
        }
      }
    }
  }
`);

export const UsageQuery = graphql(`
  query Usage($period: PeriodInput!, $groupBy: [UsageDimension!], $filter: UsageFilter) {
    usage(period: $period, groupBy: $groupBy, filter: $filter) {
      start
      end
      asOf
      currency
      rows {
        project
        queue
        cluster
        gpuModel
        user
        day
        gpuHours
        effectiveCost
        listCost
        gpuHoursValue
        effectiveCostValue
        charges
      }
    }
  }
`);

export const ExportUsageMutation = graphql(`
  mutation ExportUsage($period: PeriodInput!, $format: ExportFormat!, $tenantId: ID) {
    exportUsage(period: $period, format: $format, tenantId: $tenantId) {
      id
      periodEnd
      format
      rows
      bytes
      sha256
      downloadUrl
    }
  }
`);

export const PriceBookQuery = graphql(`
  query PriceBook {
    priceBook {
      id
      gpuModel
      listPricePerGpuHour
      contractedPricePerGpuHour
      currency
      effectiveFrom
      effectiveTo
    }
  }
`);

export const SetPriceMutation = graphql(`
  mutation SetPrice(
    $gpuModel: String!
    $list: String!
    $contracted: String
    $currency: String
    $from: DateTime!
    $to: DateTime
  ) {
    setPrice(
      gpuModel: $gpuModel
      listPricePerGpuHour: $list
      contractedPricePerGpuHour: $contracted
      currency: $currency
      effectiveFrom: $from
      effectiveTo: $to
    ) {
      id
    }
  }
`);

export const ApiTokensQuery = graphql(`
  query ApiTokens {
    apiTokens {
      id
      name
      prefix
      createdAt
      expiresAt
      revokedAt
      lastUsedAt
      scopes
    }
  }
`);

export const CreateApiTokenMutation = graphql(`
  mutation CreateApiToken($name: String!, $days: Int!, $scopes: [TokenScope!]) {
    createApiToken(name: $name, expiresInDays: $days, scopes: $scopes) {
      secret
      id
      name
      expiresAt
    }
  }
`);

export const RevokeApiTokenMutation = graphql(`
  mutation RevokeApiToken($id: ID!) {
    revokeApiToken(id: $id) {
      id
      revokedAt
    }
  }
`);

export const RegisterClusterMutation = graphql(`
  mutation RegisterCluster($id: String!, $displayName: String) {
    registerCluster(id: $id, displayName: $displayName) {
      agentToken
      helmInstallCommand
      cluster {
        id
        displayName
      }
    }
  }
`);

export const RotateAgentTokenMutation = graphql(`
  mutation RotateAgentToken($clusterId: String!) {
    rotateAgentToken(clusterId: $clusterId) {
      agentToken
      helmInstallCommand
      cluster {
        id
        displayName
      }
    }
  }
`);

/** A service as the Services table shows it. */
export const ServiceSummaryFields = graphql(`
  fragment ServiceSummaryFields on Service {
    id
    name
    project
    queue
    owner
    state
    condition
    revision
    minReplicas
    maxReplicas
    desiredReplicas
    readyReplicas
    port
    readinessPath
    image
    autoscaling {
      metric
      target
      scaleDownDelaySeconds
    }
    maxSurge
    maxUnavailable
    requestsPerSecond
    loadReportedAt
    createdAt
    updatedAt
  }
`);

/** The live services of every project the caller can see. */
export const ServicesQuery = graphql(`
  query Services($project: String) {
    services(project: $project) {
      ...ServiceSummaryFields
    }
  }
`);

/**
 * One service with its replicas (jobs), placement and history, and its project (the id the
 * page follows `projectJobEvents` of, and the caller's role there).
 */
export const ServiceQuery = graphql(`
  query Service($project: String!, $name: String!, $history: Int!) {
    project(slug: $project) {
      id
      slug
      myRole
    }
    service(project: $project, name: $name) {
      ...ServiceSummaryFields
      replicas {
        id
        name
        state
        clusterId
        spec
        submittedAt
        updatedAt
        utilization {
          lastBusyPct
        }
      }
      gpuUtilization {
        busyPct
        replicas
      }
      replicasByCluster {
        clusterId
        replicas
        ready
        endpoint
      }
      scalingHistory(limit: $history) {
        at
        fromReplicas
        toReplicas
        signal
        reason
      }
      revisions {
        revision
        createdAt
        image
      }
    }
  }
`);

export const ApplyServiceMutation = graphql(`
  mutation ApplyService($input: ServiceInput!) {
    applyService(input: $input) {
      applied
      service {
        ...ServiceSummaryFields
      }
    }
  }
`);

export const ScaleServiceMutation = graphql(`
  mutation ScaleService($project: String!, $name: String!, $replicas: Int, $minReplicas: Int, $maxReplicas: Int) {
    scaleService(project: $project, name: $name, replicas: $replicas, minReplicas: $minReplicas, maxReplicas: $maxReplicas) {
      ...ServiceSummaryFields
    }
  }
`);

export const SetServiceLoadMutation = graphql(`
  mutation SetServiceLoad($project: String!, $name: String!, $requestsPerSecond: Float!) {
    setServiceLoad(project: $project, name: $name, requestsPerSecond: $requestsPerSecond) {
      ...ServiceSummaryFields
    }
  }
`);

export const DeleteServiceMutation = graphql(`
  mutation DeleteService($project: String!, $name: String!) {
    deleteService(project: $project, name: $name) {
      id
      name
      project
      state
    }
  }
`);

/** The fields of one interval of metrics history (GPU; and a job's CPU, memory, disk, network). */
export const MetricPointFields = graphql(`
  fragment MetricPointFields on MetricPoint {
    at
    samples
    busyPctAvg
    busyPctMax
    memoryUsedMibAvg
    memoryUsedMibMax
    usageSamples
    cpuCoresAvg
    cpuCoresMax
    memoryMibAvg
    memoryMibMax
    diskReadBpsAvg
    diskWriteBpsAvg
    netRxBpsAvg
    netTxBpsAvg
  }
`);

/** A job's metrics over a range (its own query, read again while it runs). */
export const JobMetricHistoryQuery = graphql(`
  query JobMetricHistory($id: ID!, $since: DateTime!) {
    job(id: $id) {
      id
      metricHistory(since: $since) {
        resolutionSeconds
        points {
          ...MetricPointFields
        }
      }
    }
  }
`);

/** A cluster's GPU metrics over a range. */
export const ClusterMetricHistoryQuery = graphql(`
  query ClusterMetricHistory($id: String!, $since: DateTime!) {
    cluster(id: $id) {
      id
      metricHistory(since: $since) {
        resolutionSeconds
        points {
          ...MetricPointFields
        }
      }
    }
  }
`);

/** What a job has cost so far (its own query: a model without a price fails only this). */
export const JobCostQuery = graphql(`
  query JobCost($id: ID!) {
    job(id: $id) {
      id
      cost {
        currency
        effectiveCostValue
        gpuHoursValue
      }
    }
  }
`);

/** What a service's replicas have cost so far. */
export const ServiceCostQuery = graphql(`
  query ServiceCost($project: String!, $name: String!) {
    service(project: $project, name: $name) {
      id
      cost {
        currency
        effectiveCostValue
        gpuHoursValue
      }
    }
  }
`);

/** A replica's output: the last lines of one page. */
export const JobLogsQuery = graphql(`
  query JobLogs($jobId: ID!, $task: String, $replica: Int, $tail: Int) {
    jobLogs(jobId: $jobId, task: $task, replica: $replica, tail: $tail) {
      task
      replica
      clusterId
      source
      truncated
      ended
      cursor
      lines {
        at
        stream
        text
      }
    }
  }
`);

/** Live: a replica's new lines as they are written, until it ends. */
export const FollowJobLogsSubscription = graphql(`
  subscription FollowJobLogs($jobId: ID!, $task: String, $replica: Int, $tail: Int!) {
    followJobLogs(jobId: $jobId, task: $task, replica: $replica, tail: $tail) {
      source
      truncated
      ended
      lines {
        at
        stream
        text
      }
    }
  }
`);

export const BudgetFieldsFragment = graphql(`
  fragment BudgetFields on Budget {
    unit
    unitLabel
    amount
    amountValue
    softPercent
    hard
    suspendBorrowed
    periodStart
    periodEnd
    spentValue
    committedValue
    status
    burnDown {
      day
      spent
    }
    updatedAt
  }
`);

export const SetBudgetMutation = graphql(`
  mutation SetBudget(
    $projectId: ID
    $tenantId: ID
    $unit: BudgetUnit!
    $amount: String!
    $softPercent: Int!
    $hard: Boolean!
    $suspendBorrowed: Boolean!
  ) {
    setBudget(
      projectId: $projectId
      tenantId: $tenantId
      unit: $unit
      amount: $amount
      softPercent: $softPercent
      hard: $hard
      suspendBorrowed: $suspendBorrowed
    ) {
      ...BudgetFields
    }
  }
`);

export const RemoveBudgetMutation = graphql(`
  mutation RemoveBudget($projectId: ID, $tenantId: ID) {
    removeBudget(projectId: $projectId, tenantId: $tenantId)
  }
`);

export const CordonClusterMutation = graphql(`
  mutation CordonCluster($id: String!) {
    cordonCluster(id: $id) {
      ...ClusterFields
    }
  }
`);

export const DrainClusterMutation = graphql(`
  mutation DrainCluster($id: String!, $graceSeconds: Int!) {
    drainCluster(id: $id, graceSeconds: $graceSeconds) {
      ...ClusterFields
    }
  }
`);

export const UncordonClusterMutation = graphql(`
  mutation UncordonCluster($id: String!) {
    uncordonCluster(id: $id) {
      ...ClusterFields
    }
  }
`);

export const RetireClusterMutation = graphql(`
  mutation RetireCluster($id: String!) {
    retireCluster(id: $id) {
      id
      retiredAt
    }
  }
`);

export const CordonNodeMutation = graphql(`
  mutation CordonNode($clusterId: String!, $node: String!) {
    cordonNode(clusterId: $clusterId, node: $node) {
      ...ClusterFields
    }
  }
`);

export const DrainNodeMutation = graphql(`
  mutation DrainNode($clusterId: String!, $node: String!, $graceSeconds: Int!) {
    drainNode(clusterId: $clusterId, node: $node, graceSeconds: $graceSeconds) {
      ...ClusterFields
    }
  }
`);

export const UncordonNodeMutation = graphql(`
  mutation UncordonNode($clusterId: String!, $node: String!) {
    uncordonNode(clusterId: $clusterId, node: $node) {
      ...ClusterFields
    }
  }
`);

export const DeleteQueueMutation = graphql(`
  mutation DeleteQueue($queueId: ID!) {
    deleteQueue(queueId: $queueId)
  }
`);

export const DeleteProjectMutation = graphql(`
  mutation DeleteProject($projectId: ID!) {
    deleteProject(projectId: $projectId) {
      id
      slug
    }
  }
`);

export const AuditEventsQuery = graphql(`
  query AuditEvents($clusterId: String, $first: Int!) {
    auditEvents(clusterId: $clusterId, first: $first) {
      id
      at
      actor
      action
      target
      detail
    }
  }
`);

export const WaitingJobsQuery = graphql(`
  query WaitingJobs($filter: JobsFilter, $first: Int!, $after: String) {
    jobs(filter: $filter, first: $first, after: $after) {
      pageInfo {
        hasNextPage
        endCursor
      }
      nodes {
        id
        name
        state
        priorityClass
        projectSlug
        queueName
        ownerSubject
        submittedAt
        queuePosition
        workloadType
      }
    }
  }
`);

export const TenantBudgetsQuery = graphql(`
  query TenantBudgets {
    tenants {
      id
      slug
      name
      budget {
        ...BudgetFields
      }
    }
  }
`);
