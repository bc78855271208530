// The pages whose API is not on the server yet, rendered from fixtures.
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { PlannedPage } from '../components/PlannedPage';
import { clusters, overview, queue, usage } from '../test/fixtures';
import { renderWith } from '../test/render';
import { ApiTokensPanel, helmCommand, PriceBookPanel, RegisterClusterPanel } from './admin/AdminView';
import { BillingView, costSeries } from './billing/BillingView';
import { ClustersView, heatValue } from './clusters/ClustersView';
import { OverviewView } from './overview/OverviewView';
import { MembersPanel } from './projects/MembersPanel';
import { QueueCard } from './projects/QueueCard';

describe('OverviewView', () => {
  it('sums GPUs over clusters and lists idle allocated GPUs', () => {
    renderWith(<OverviewView data={overview} />);
    expect(screen.getByTestId('stat-clusters')).toHaveTextContent('2');
    expect(screen.getByTestId('stat-allocated')).toHaveTextContent('56 / 96');
    expect(screen.getByTestId('stat-free')).toHaveTextContent('40');
    expect(screen.getByTestId('stat-queue')).toHaveTextContent('12');
    const idle = screen.getByRole('grid');
    expect(within(idle).getByRole('link', { name: 'notebook-bob' })).toHaveAttribute('href', '/jobs/77');
  });
});

describe('ClustersView', () => {
  it('shows health, models and a heatmap per cluster', async () => {
    renderWith(<ClustersView clusters={clusters} />);
    const c = screen.getByRole('region', { name: 'Cluster east-1' });
    expect(within(c).getByText('healthy')).toBeInTheDocument();
    expect(within(c).getByText('1 node(s) unhealthy')).toBeInTheDocument();
    expect(within(c).getByText('Models: A100-80GB, H100-80GB')).toBeInTheDocument();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Allocation' }));
    expect(screen.getByRole('button', { name: 'Allocation' })).toHaveAttribute('aria-pressed', 'true');
  });

  it('colours by utilization or allocation; empty state', () => {
    expect(heatValue('allocation', { allocatedMilli: 250, busyPercent: 90 })).toBe(25);
    expect(heatValue('utilization', { allocatedMilli: 250, busyPercent: null })).toBe(0);
    renderWith(<ClustersView clusters={[]} />);
    expect(screen.getByText('No clusters registered')).toBeInTheDocument();
  });
});

describe('BillingView', () => {
  it('stacks cost per period by the chosen group', () => {
    const { periods, series } = costSeries(usage, 'project');
    expect(periods).toEqual(['2026-11-20', '2026-11-21']);
    expect(series).toEqual([
      { label: 'nlp', stack: 'cost', data: [10, 0] },
      { label: 'vision', stack: 'cost', data: [30, 6] },
    ]);
    expect(costSeries(usage, 'clusterId').series.map((s) => s.label)).toEqual(['east-1', 'west-1']);
  });

  it('lists usage and starts an export', async () => {
    const onExport = vi.fn(async () => '/api/exports/9');
    const assign = vi.fn();
    vi.stubGlobal('location', { ...window.location, assign });
    renderWith(<BillingView rows={usage} onExport={onExport} />);
    expect(within(screen.getByRole('grid')).getByText('nlp')).toBeInTheDocument();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Export FOCUS CSV' }));
    expect(onExport).toHaveBeenCalledWith('FOCUS_CSV');
    expect(assign).toHaveBeenCalledWith('/api/exports/9');
    vi.unstubAllGlobals();
  });

  it('has an empty state', () => {
    renderWith(<BillingView rows={[]} onExport={vi.fn()} />);
    expect(screen.getByText('No usage in this period')).toBeInTheDocument();
  });
});

describe('Admin panels', () => {
  it('shows the one-time agent token inside the helm command', async () => {
    const onRegister = vi.fn(async () => ({ clusterId: 'c9', agentToken: 'secret-123' }));
    const user = userEvent.setup();
    renderWith(<RegisterClusterPanel onRegister={onRegister} />);
    await user.type(screen.getByLabelText(/Cluster name/), 'east-2');
    await user.click(screen.getByRole('button', { name: 'Register' }));
    expect(onRegister).toHaveBeenCalledWith('east-2');
    expect(await screen.findByTestId('helm-command')).toHaveTextContent('agentToken=secret-123');
    expect(helmCommand('c', 't', 'https://grus')).toContain('controlPlane.url=https://grus');
  });

  it('lists prices and tokens; creates and revokes tokens', async () => {
    const onCreate = vi.fn(async () => 'grus_tok_1');
    const onRevoke = vi.fn(async () => {});
    const user = userEvent.setup();
    renderWith(
      <>
        <PriceBookPanel prices={[{ gpuModel: 'H100-80GB', clusterId: null, pricePerGpuHour: 3, currency: 'USD', validFrom: '2026-11-01T00:00:00Z' }]} />
        <ApiTokensPanel
          tokens={[{ id: 't1', name: 'ci', createdAt: '2026-11-01T00:00:00Z', lastUsedAt: null, expiresAt: null }]}
          onCreate={onCreate}
          onRevoke={onRevoke}
        />
      </>,
    );
    expect(within(screen.getAllByRole('grid')[0]!).getByText('H100-80GB')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Revoke ci' }));
    expect(onRevoke).toHaveBeenCalledWith('t1');
    await user.type(screen.getByLabelText(/Token name/), 'laptop');
    await user.click(screen.getByRole('button', { name: 'Create token' }));
    expect(await screen.findByTestId('token-secret')).toHaveTextContent('grus_tok_1');
  });
});

describe('Projects parts', () => {
  it('draws quota vs usage bars per resource', () => {
    renderWith(<QueueCard queue={queue} />);
    const bars = screen.getAllByRole('progressbar');
    expect(bars.map((b) => b.getAttribute('aria-label'))).toEqual([
      'cpu_milli: 0 CPU used of 64 CPU guaranteed, limit none',
      'gpu: 10 GPU used of 8 GPU guaranteed, limit 16 GPU',
      'memory_mib: 2 GiB used of 0 GiB guaranteed, limit none',
    ]);
    expect(screen.getAllByText(/· borrowing/).length).toBeGreaterThan(0);
  });

  it('members: unavailable today, a table when the API has them', () => {
    const onAdd = vi.fn(async () => null);
    const { unmount } = renderWith(<MembersPanel members={{ status: 'unavailable', fields: ['Project.members'] }} canManage onAdd={onAdd} />);
    expect(screen.getByText(/Project.members/)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Add member' })).toBeInTheDocument();
    unmount();
    renderWith(
      <MembersPanel
        members={{
          status: 'ready',
          refresh: vi.fn(),
          data: [{ user: { id: '1', subject: 'dev:bob', displayName: 'bob', email: null }, role: 'MEMBER', via: 'PROJECT' }],
        }}
        canManage={false}
        onAdd={onAdd}
      />,
    );
    expect(within(screen.getByRole('grid')).getByText('dev:bob')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Add member' })).toBeNull();
  });
});

describe('PlannedPage', () => {
  it('renders loading, error and unavailable states', () => {
    const { rerender } = renderWith(<PlannedPage title="X" result={{ status: 'loading' }}>{() => null}</PlannedPage>);
    expect(screen.getByRole('status')).toHaveTextContent('Loading');
    rerender(
      <PlannedPage title="X" result={{ status: 'error', error: new Error('boom'), retry: vi.fn() }}>
        {() => null}
      </PlannedPage>,
    );
    expect(screen.getByText('boom')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Retry' })).toBeInTheDocument();
    rerender(<PlannedPage title="X" result={{ status: 'unavailable', fields: ['clusters'] }}>{() => null}</PlannedPage>);
    expect(screen.getByText(/needs API fields/)).toHaveTextContent('clusters');
  });
});
