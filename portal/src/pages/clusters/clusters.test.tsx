import { render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter } from 'react-router-dom';
import userEvent from '@testing-library/user-event';
import { CombinedError, Provider } from 'urql';
import { describe, expect, it } from 'vitest';
import { makeSubject } from 'wonka';
import { clusters } from '../../test/fixtures';
import { mockClient, renderWith } from '../../test/render';
import { ClustersPage } from './ClustersPage';
import { ClustersView, heatValue, nodeRows } from './ClustersView';

describe('ClustersPage', () => {
  it('shows health, GPU models, a heatmap and the nodes per cluster; live through clusterUpdates', async () => {
    const updates = makeSubject<unknown>();
    let health = 'healthy';
    const { client, executed } = mockClient(
      { Clusters: () => ({ data: { clusters: [{ ...clusters[0]!, health }, clusters[1]!] } }) },
      {},
      { ClusterUpdates: updates.source },
    );
    renderWith(<ClustersPage />, { client });
    const east = await screen.findByRole('region', { name: 'Cluster East 1' });
    expect(within(east).getByTestId('health-east-1')).toHaveTextContent('healthy');
    expect(within(east).getByText('1 node(s) unhealthy')).toBeInTheDocument();
    expect(within(east).getByText('H100-80GB: 0 free of 2')).toBeInTheDocument();
    const pools = within(east).getByRole('group', { name: 'Node pools' });
    expect(within(pools).getByText('pool train: 0 of 2 GPUs free · 1 node')).toBeInTheDocument();
    expect(within(within(east).getByRole('grid')).getByText('gpu-node-b')).toBeInTheDocument();
    const west = screen.getByRole('region', { name: 'Cluster west-1' });
    expect(within(west).getByText('cordoned')).toBeInTheDocument();
    expect(within(west).queryByRole('group', { name: 'Node pools' })).toBeNull();
    expect(within(west).getByText('No capacity reported yet')).toBeInTheDocument();

    await userEvent.setup().click(screen.getByRole('button', { name: 'Allocation' }));
    expect(screen.getByRole('button', { name: 'Allocation' })).toHaveAttribute('aria-pressed', 'true');

    health = 'degraded';
    const before = executed.length;
    updates.next({ clusterUpdates: { __typename: 'ClusterStatus', id: 'east-1', health } });
    await waitFor(() => expect(executed.length).toBeGreaterThan(before));
    await waitFor(() => expect(screen.getByTestId('health-east-1')).toHaveTextContent('degraded'));
  });

  it('says when the agent of a cluster serves another control plane', async () => {
    const { client } = mockClient({
      Clusters: () => ({
        data: { clusters: [{ ...clusters[0]!, health: 'degraded', controlPlaneMismatch: true }, clusters[1]!] },
      }),
    });
    renderWith(<ClustersPage />, { client });
    const east = await screen.findByRole('region', { name: 'Cluster East 1' });
    expect(within(east).getByText('agent serves another control plane')).toBeInTheDocument();
    const west = screen.getByRole('region', { name: 'Cluster west-1' });
    expect(within(west).queryByText('agent serves another control plane')).toBeNull();
  });

  it('offers platform admins cordon, drain and uncordon per node and cluster; others see none', async () => {
    const platformAdmin = (admin: boolean) => ({
      data: { me: { __typename: 'User', id: '1', subject: 'dev:alice', email: null, displayName: null, platformAdmin: admin } },
    });
    const member = mockClient({ Me: platformAdmin(false), Clusters: { data: { clusters } } });
    const { unmount } = renderWith(<ClustersPage />, { client: member.client });
    await screen.findByRole('region', { name: 'Cluster East 1' });
    expect(screen.queryByRole('button', { name: /Drain/ })).toBeNull();
    expect(screen.queryByRole('group', { name: 'Operate cluster east-1' })).toBeNull();
    unmount();

    const admin = mockClient({ Me: platformAdmin(true), Clusters: { data: { clusters } } }, {
      DrainNode: () => ({ data: { drainNode: { ...clusters[0]! } } }),
      RetireCluster: () => ({ error: new CombinedError({ graphQLErrors: [{ message: 'cluster east-1 still holds 2 job(s)', extensions: { code: 'CONFLICT' } }] }) }),
    });
    renderWith(<ClustersPage />, { client: admin.client });
    const east = await screen.findByRole('region', { name: 'Cluster East 1' });
    const nodes = within(east).getByRole('grid');
    // gpu-node-a is draining: it can only be uncordoned; gpu-node-b can be cordoned or drained.
    expect(within(nodes).getByText('draining')).toBeInTheDocument();
    expect(within(nodes).getByRole('button', { name: 'Uncordon node gpu-node-a' })).toBeInTheDocument();
    const user = userEvent.setup();
    await user.click(within(nodes).getByRole('button', { name: 'Drain node gpu-node-b' }));
    expect(admin.calls.some((c) => c.name === 'DrainNode')).toBe(false);
    const ask = screen.getByRole('dialog', { name: 'Drain node gpu-node-b?' });
    await user.click(within(ask).getByRole('button', { name: 'Drain node' }));
    expect(admin.calls.at(-1)).toEqual({ name: 'DrainNode', variables: { clusterId: 'east-1', node: 'gpu-node-b', graceSeconds: 30 } });
    expect(await within(east).findByText('Node gpu-node-b draining')).toBeInTheDocument();
    // Until the dialog's closing transition ends, the page behind it is aria-hidden.
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    await user.click(within(east).getByRole('button', { name: 'Retire cluster' }));
    await user.click(within(screen.getByRole('dialog', { name: 'Retire cluster east-1?' })).getByRole('button', { name: 'Retire cluster' }));
    expect(await within(east).findByText(/still holds 2 job/)).toBeInTheDocument();
  });

  it('asks before draining a node, and the question outlives a re-read that remounts the cell', async () => {
    const admin = mockClient({}, { DrainNode: () => ({ data: { drainNode: { ...clusters[0]! } } }) });
    const view = (cs: typeof clusters) => (
      <Provider value={admin.client}>
        <MemoryRouter>
          <ClustersView clusters={cs} canOperate onChanged={() => {}} />
        </MemoryRouter>
      </Provider>
    );
    const { rerender } = render(view(clusters));
    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Drain node gpu-node-b' }));
    screen.getByRole('dialog', { name: 'Drain node gpu-node-b?' });
    // The next read shows gpu-node-b cordoned by someone else: its cell now offers Uncordon,
    // and the Drain button that asked is gone.
    const reread = clusters.map((c) => ({
      ...c,
      nodes: c.nodes.map((n) => (n.name === 'gpu-node-b' ? { ...n, cordoned: true } : n)),
    }));
    rerender(view(reread));
    expect(screen.queryByRole('button', { name: 'Drain node gpu-node-b' })).toBeNull();
    const ask = screen.getByRole('dialog', { name: 'Drain node gpu-node-b?' });
    await user.click(within(ask).getByRole('button', { name: 'Drain node' }));
    expect(admin.calls.at(-1)).toEqual({ name: 'DrainNode', variables: { clusterId: 'east-1', node: 'gpu-node-b', graceSeconds: 30 } });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('colours by utilization or allocation and sums nodes', () => {
    expect(heatValue('allocation', { allocatedMilli: 250, busyPct: 90 })).toBe(25);
    expect(heatValue('utilization', { allocatedMilli: 250, busyPct: null })).toBe(0);
    const rows = nodeRows(clusters[0]!);
    expect(rows[0]).toMatchObject({ name: 'gpu-node-a', pool: 'train', gpus: 2, allocated: 1.25, busy: 49, models: 'H100-80GB' });
    expect(rows[1]).toMatchObject({ healthy: false, busy: null });
  });

  it('has empty, loading and error states', async () => {
    const empty = mockClient({ Clusters: { data: { clusters: [] } } });
    const { unmount } = renderWith(<ClustersPage />, { client: empty.client });
    expect(await screen.findByText('No clusters registered')).toBeInTheDocument();
    unmount();
    const loading = mockClient({});
    const r2 = renderWith(<ClustersPage />, { client: loading.client });
    expect(screen.getByRole('status')).toHaveTextContent('Loading clusters');
    r2.unmount();
    const failing = mockClient({ Clusters: { error: new CombinedError({ graphQLErrors: [{ message: 'boom', extensions: { code: 'INTERNAL' } }] }) } });
    renderWith(<ClustersPage />, { client: failing.client });
    expect(await screen.findByText('boom')).toBeInTheDocument();
  });
});
