import { act, screen, waitFor, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { CombinedError } from 'urql';
import { makeSubject } from 'wonka';
import { clusters } from '../../test/fixtures';
import { mockClient, renderWith } from '../../test/render';
import { READINGS_MS } from '../../api/live';
import { OverviewPage } from './OverviewPage';
import { deviceIndexes, fleetTotals, idleGpus, jobCounts } from './summary';

const running = [
  {
    __typename: 'Job' as const,
    id: '77',
    name: 'notebook-bob',
    project: { __typename: 'Project' as const, slug: 'vision' },
    replicas: [{ __typename: 'Replica' as const, state: 'running', clusterId: 'west-1', node: 'w-node-3', devices: [{ index: 5, milli: 1000 }] }],
  },
];

const overviewJobs = {
  __typename: 'Query' as const,
  recent: {
    __typename: 'JobConnection' as const,
    pageInfo: { __typename: 'PageInfo' as const, hasNextPage: false },
    nodes: [
      { __typename: 'Job' as const, id: '1', state: 'RUNNING' as const },
      { __typename: 'Job' as const, id: '2', state: 'PENDING' as const },
      { __typename: 'Job' as const, id: '3', state: 'PENDING' as const },
    ],
  },
  waiting: {
    __typename: 'JobConnection' as const,
    pageInfo: { __typename: 'PageInfo' as const, hasNextPage: true },
    nodes: [{ __typename: 'Job' as const, id: '2' }],
  },
};

describe('overview summary', () => {
  it('counts GPUs allocated, free and busy (allocated ones only) over every cluster', () => {
    expect(fleetTotals(clusters)).toEqual({
      clusters: 2,
      unhealthyClusters: 1,
      gpus: 5,
      allocated: 3,
      free: 1,
      busy: 1,
      readingsAt: '2026-11-22T03:00:00Z',
    });
  });

  it('lists allocated GPUs under 10 % busy with the job that holds them, least busy first', () => {
    const idle = idleGpus(clusters, running);
    expect(idle.map((g) => [g.id, g.busyPct, g.job?.name ?? null])).toEqual([
      ['west-1/w-node-3/5', 2, 'notebook-bob'],
      ['east-1/gpu-node-a/1', 5, null],
    ]);
  });

  it('reads replica devices and counts jobs by state', () => {
    expect(deviceIndexes([{ index: 3, milli: 250 }, { index: 4 }])).toEqual([3, 4]);
    expect(deviceIndexes(null)).toEqual([]);
    const c = jobCounts(overviewJobs);
    expect(c.byState).toEqual([
      { state: 'PENDING', count: 2 },
      { state: 'RUNNING', count: 1 },
    ]);
    expect(c.queueDepth).toBe(1);
    expect(c.queueDepthTruncated).toBe(true);
  });
});

describe('OverviewPage', () => {
  it('shows the fleet, the queue depth, jobs by state and idle GPUs; refetches on cluster updates', async () => {
    const updates = makeSubject<unknown>();
    const { client, executed } = mockClient(
      {
        Clusters: { data: { clusters } },
        OverviewJobs: { data: overviewJobs },
        RunningJobs: { data: { jobs: { __typename: 'JobConnection', nodes: running } } },
      },
      {},
      { ClusterUpdates: updates.source },
    );
    renderWith(<OverviewPage />, { client });
    expect(await screen.findByTestId('stat-clusters')).toHaveTextContent('2');
    expect(screen.getByTestId('stat-allocated')).toHaveTextContent('3 / 5');
    expect(screen.getByTestId('stat-free')).toHaveTextContent('1');
    expect(screen.getByTestId('stat-busy')).toHaveTextContent('1');
    expect(screen.getByTestId('stat-queue')).toHaveTextContent('1+');
    expect(within(screen.getByRole('list', { name: 'Job counts' })).getByText('PENDING: 2')).toBeInTheDocument();
    const idle = screen.getByRole('grid');
    expect(within(idle).getByRole('link', { name: 'notebook-bob' })).toHaveAttribute('href', '/jobs/77');

    const before = executed.filter((e) => e.name === 'Clusters').length;
    updates.next({ clusterUpdates: { __typename: 'ClusterStatus', id: 'east-1', health: 'degraded' } });
    await waitFor(() => expect(executed.filter((e) => e.name === 'Clusters').length).toBeGreaterThan(before));
  });

  it('reads GPU readings again without a reload: a GPU that got busy leaves the idle panel', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      let busy = false;
      const allBusy = clusters.map((c) => ({
        ...c,
        nodes: c.nodes.map((n) => ({ ...n, gpus: n.gpus.map((g) => ({ ...g, busyPct: g.busyPct == null ? null : 95 })) })),
      }));
      const { client } = mockClient({
        Clusters: () => ({ data: { clusters: busy ? allBusy : clusters } }),
        OverviewJobs: { data: overviewJobs },
        RunningJobs: { data: { jobs: { __typename: 'JobConnection', nodes: running } } },
      });
      renderWith(<OverviewPage />, { client });
      const idle = await screen.findByRole('grid');
      expect(within(idle).getByRole('link', { name: 'notebook-bob' })).toBeInTheDocument();
      expect(screen.getByText(/readings from/)).toBeInTheDocument();
      busy = true;
      await act(async () => {
        vi.advanceTimersByTime(READINGS_MS + 100);
      });
      await waitFor(() => expect(screen.getByText('No idle allocated GPUs')).toBeInTheDocument());
    } finally {
      vi.useRealTimers();
    }
  });

  it('shows an error with a retry', async () => {
    const { client } = mockClient({
      Clusters: { error: new CombinedError({ networkError: new Error('network down') }) },
      OverviewJobs: { data: overviewJobs },
      RunningJobs: { data: { jobs: { nodes: [] } } },
    });
    renderWith(<OverviewPage />, { client });
    expect(await screen.findByText(/Cannot reach the API: network down/)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Retry' })).toBeInTheDocument();
  });

  it('shows loading, and empty states', async () => {
    const { client } = mockClient({});
    const { unmount } = renderWith(<OverviewPage />, { client });
    expect(screen.getByRole('status')).toHaveTextContent('Loading the fleet');
    unmount();
    const empty = mockClient({
      Clusters: { data: { clusters: [] } },
      OverviewJobs: {
        data: { ...overviewJobs, recent: { ...overviewJobs.recent, nodes: [] }, waiting: { ...overviewJobs.waiting, nodes: [] } },
      },
      RunningJobs: { data: { jobs: { nodes: [] } } },
    });
    renderWith(<OverviewPage />, { client: empty.client });
    expect(await screen.findByText('No jobs yet')).toBeInTheDocument();
    expect(screen.getByText('No idle allocated GPUs')).toBeInTheDocument();
  });
});
