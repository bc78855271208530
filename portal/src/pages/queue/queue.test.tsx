import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockClient, renderWith } from '../../test/render';
import { QueuePage, queueRows } from './QueuePage';

const job = (id: string, project: string, queue: string, position: number | null, owner = 'dev:alice') => ({
  __typename: 'Job' as const,
  id,
  name: `job-${id}`,
  state: 'ADMITTED' as const,
  priorityClass: 'normal',
  projectSlug: project,
  queueName: queue,
  ownerSubject: owner,
  submittedAt: '2026-11-28T10:00:00Z',
  queuePosition: position,
  workloadType: 'BATCH' as const,
});

const me = { data: { me: { __typename: 'User', id: '7', subject: 'dev:alice', email: null, displayName: 'Alice', platformAdmin: false } } };

describe('QueuePage', () => {
  it('reads as the line: by project, queue and place', () => {
    const rows = queueRows([job('1', 'vision', 'default', 2), job('2', 'nlp', 'default', 1), job('3', 'vision', 'default', 1)]);
    expect(rows.map((r) => r.id)).toEqual(['2', '3', '1']);
  });

  it('shows every waiting job the caller sees, and only theirs when asked', async () => {
    const { client, executed } = mockClient({
      Me: me,
      WaitingJobs: (vars: { filter: { userId?: string } }) => ({
        data: { jobs: { __typename: 'JobConnection', nodes: vars.filter.userId ? [job('3', 'vision', 'default', 1)] : [job('3', 'vision', 'default', 1), job('4', 'nlp', 'batch', 1, 'dev:bob')] } },
      }),
    });
    renderWith(<QueuePage />, { client, path: '/queue' });
    const grid = await screen.findByRole('grid');
    expect(within(grid).getByText('job-4')).toBeInTheDocument();
    expect(within(grid).getAllByText('#1')).toHaveLength(2);
    await userEvent.setup().click(screen.getByLabelText('Only my jobs'));
    await waitFor(() => expect(within(screen.getByRole('grid')).queryByText('job-4')).toBeNull());
    const last = executed.filter((e) => e.name === 'WaitingJobs').at(-1)!.variables as { filter: { userId?: string; states: string[] } };
    expect(last.filter.userId).toBe('7');
    expect(last.filter.states).toEqual(['PENDING', 'ADMITTED', 'DISPATCHED', 'REJECTED', 'SCHEDULED', 'PREEMPTED']);
  });
});
