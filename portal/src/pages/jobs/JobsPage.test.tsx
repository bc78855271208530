import { screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { makeSubject } from 'wonka';
import { mockClient, renderWith } from '../../test/render';
import { JobsPage } from './JobsPage';

const project = { __typename: 'Project', id: '3', tenantId: '1', slug: 'vision', name: 'Vision', myRole: 'MEMBER', createdAt: '2026-11-20T10:00:00Z', queues: [] };
const job = (state: string) => ({
  __typename: 'Job',
  id: '42',
  projectId: '3',
  queueId: '4',
  name: 'gang-train',
  state,
  priority: 100,
  priorityClass: 'normal',
  preemptible: false,
  borrowed: false,
  submittedBy: '7',
  submitter: { __typename: 'User', id: '7', subject: 'alice' },
  submittedAt: '2026-11-20T10:00:00Z',
  updatedAt: '2026-11-20T10:05:00Z',
  clusterId: 'east',
  tasks: [{ __typename: 'Task', id: '1', name: 'main', replicaCount: 2, state: 'running' }],
});

describe('JobsPage', () => {
  it('lists the project jobs with the submitter and follows projectJobEvents live', async () => {
    const events = makeSubject<unknown>();
    let state = 'RUNNING';
    const { client, executed } = mockClient(
      {
        Projects: { data: { projects: [project] } },
        ProjectJobs: () => ({
          data: {
            project: {
              __typename: 'Project',
              id: '3',
              slug: 'vision',
              myRole: 'MEMBER',
              queues: [{ __typename: 'Queue', id: '4', name: 'default' }],
              jobs: { __typename: 'JobConnection', pageInfo: { __typename: 'PageInfo', hasNextPage: false, endCursor: null }, nodes: [job(state)] },
            },
          },
        }),
      },
      {},
      { ProjectJobEvents: events.source },
    );
    renderWith(<JobsPage />, { path: '/jobs?project=vision', client });
    const row = (await screen.findByRole('link', { name: 'gang-train' })).closest('[role="row"]') as HTMLElement;
    expect(within(row).getByText('RUNNING')).toBeInTheDocument();
    expect(within(row).getByText('alice')).toBeInTheDocument();
    expect(within(row).getByText('default')).toBeInTheDocument();

    state = 'SUCCEEDED';
    const before = executed.filter((e) => e.name === 'ProjectJobs').length;
    events.next({ projectJobEvents: { __typename: 'JobEvent', id: '9', jobId: '42', toState: 'succeeded' } });
    await waitFor(() => expect(executed.filter((e) => e.name === 'ProjectJobs').length).toBeGreaterThan(before));
    await waitFor(() => expect(screen.getByText('SUCCEEDED')).toBeInTheDocument());
  });

  it('says when there are no projects', async () => {
    const { client } = mockClient({ Projects: { data: { projects: [] } } });
    renderWith(<JobsPage />, { client });
    expect(await screen.findByText('No projects yet')).toBeInTheDocument();
  });
});
