// Every operation the wired pages use, typed by `npm run codegen` from ../api/schema.graphql.
// Queries against fields the API does not have yet are in src/pages/*/*.planned.graphql.
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
      queues {
        ...QueueFields
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
      submittedAt
      updatedAt
      clusterId
      epoch
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
      }
      events {
        id
        taskId
        replicaId
        fromState
        toState
        cause
        actor
        at
        clusterId
        epoch
      }
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
    }
  }
`);

export const SubmitJobMutation = graphql(`
  mutation SubmitJob($input: JobInput!) {
    submitJob(input: $input) {
      borrowed
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

export const CreateTenantMutation = graphql(`
  mutation CreateTenant($slug: String!, $name: String!) {
    createTenant(slug: $slug, name: $name) {
      id
      slug
      name
      createdAt
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

export const UpdateQuotaMutation = graphql(`
  mutation UpdateQuota($queueId: ID!, $resource: String!, $guaranteed: Int!, $limit: Int) {
    updateQuota(queueId: $queueId, resource: $resource, guaranteed: $guaranteed, limit: $limit) {
      ...QueueFields
    }
  }
`);
