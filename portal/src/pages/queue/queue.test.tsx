import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockClient, renderWith } from '../../test/render';
import { MAX_PAGES, QueuePage, queueRows } from './QueuePage';

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

const lastPage = { __typename: 'PageInfo' as const, hasNextPage: false, endCursor: null };

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
        data: { jobs: { __typename: 'JobConnection', pageInfo: lastPage, nodes: vars.filter.userId ? [job('3', 'vision', 'default', 1)] : [job('3', 'vision', 'default', 1), job('4', 'nlp', 'batch', 1, 'dev:bob')] } },
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

  it('reads every page, so the head of a long line (its oldest job, on the last page) is shown', async () => {
    // 250 waiting, newest first: job 1 waited longest and heads its queue.
    const all = Array.from({ length: 250 }, (_, i) => job(String(250 - i), 'vision', 'default', 250 - i));
    const { client, executed } = mockClient({
      Me: me,
      WaitingJobs: (vars: { first: number; after: string | null }) => {
        const from = vars.after ? Number(vars.after) : 0;
        const to = Math.min(from + vars.first, all.length);
        const pageInfo = { __typename: 'PageInfo' as const, hasNextPage: to < all.length, endCursor: to < all.length ? String(to) : null };
        return { data: { jobs: { __typename: 'JobConnection', pageInfo, nodes: all.slice(from, to) } } };
      },
    });
    renderWith(<QueuePage />, { client, path: '/queue' });
    const grid = await screen.findByRole('grid');
    expect(within(grid).getByText('job-1')).toBeInTheDocument();
    expect(screen.getByText(/of 250/)).toBeInTheDocument();
    expect(screen.queryByText(/are not shown/)).toBeNull();
    expect(executed.filter((e) => e.name === 'WaitingJobs').map((e) => (e.variables as { after: string | null }).after)).toEqual([null, '100', '200']);
  });

  it('says so when more jobs wait than one reading fetches', async () => {
    let n = 0;
    const { client } = mockClient({
      Me: me,
      WaitingJobs: (vars: { first: number }) => {
        const nodes = Array.from({ length: vars.first }, () => job(String(++n), 'vision', 'default', null));
        const pageInfo = { __typename: 'PageInfo' as const, hasNextPage: true, endCursor: String(n) };
        return { data: { jobs: { __typename: 'JobConnection', pageInfo, nodes } } };
      },
    });
    renderWith(<QueuePage />, { client, path: '/queue' });
    expect(await screen.findByText(new RegExp(`More than ${(MAX_PAGES * 100).toLocaleString()} jobs wait`))).toBeInTheDocument();
  });
});
