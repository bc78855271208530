import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { usageByDay, usageTotals } from '../../test/fixtures';
import { mockClient, renderWith } from '../../test/render';
import { answeredFor, BillingPage } from './BillingPage';
import { twoDecimals } from './BillingView';
import { currentMonth, daySeries, exportedPeriod, exportPeriod, fileName } from './period';

describe('billing periods', () => {
  it('asks the server for the month to date and says where it cut', () => {
    const now = new Date('2026-11-22T03:04:05.678Z');
    expect(currentMonth(now)).toBe('2026-11');
    // No cut-off from the browser's clock: the server's decides (a clock ahead was refused).
    expect(exportPeriod('2026-11')).toEqual({ month: '2026-11', toDate: true });
    expect(exportedPeriod('2026-11', '2026-11-22T03:04:05Z')).toBe('2026-11 up to 2026-11-22 03:04:05 UTC');
    expect(exportedPeriod('2026-10', '2026-11-01T00:00:00Z')).toBe('2026-10');
  });

  it('stacks values per day by group', () => {
    const { days, series } = daySeries(usageByDay.rows, 'PROJECT', 'effectiveCostValue');
    expect(days).toEqual(['2026-11-20', '2026-11-21']);
    expect(series.map((s) => [s.label, s.data])).toEqual([
      ['nlp', [10, 0]],
      ['vision', [30, 6]],
    ]);
    expect(fileName('attachment; filename="focus-2026-11.csv"', 'x')).toBe('focus-2026-11.csv');
    expect(fileName(null, 'x.csv')).toBe('x.csv');
  });
});

describe('billing amounts', () => {
  it('shows exact decimals to 2 places, rounding on the digits', () => {
    expect(twoDecimals('12.000000000')).toBe('12.00');
    expect(twoDecimals('0.125000')).toBe('0.13');
    expect(twoDecimals('0.004999')).toBe('0.00');
    expect(twoDecimals('7')).toBe('7.00');
    expect(twoDecimals('-1.005')).toBe('-1.01');
    expect(twoDecimals('123456789012345678.999')).toBe('123456789012345679.00');
    expect(twoDecimals('n/a')).toBe('n/a');
  });

  it('pairs the per-day and total answers only when both answer the same grouping and month', () => {
    const v = (groupBy: string[], month = '2026-11') => ({ period: { month }, groupBy });
    expect(answeredFor(v(['DAY', 'CLUSTER']), v(['CLUSTER']))).toEqual({ dim: 'CLUSTER', month: '2026-11' });
    expect(answeredFor(v(['DAY', 'PROJECT']), v(['CLUSTER']))).toBeNull();
    expect(answeredFor(v(['DAY', 'CLUSTER'], '2026-10'), v(['CLUSTER']))).toBeNull();
    expect(answeredFor(undefined, v(['CLUSTER']))).toBeNull();
  });
});

describe('BillingPage', () => {
  afterEach(() => vi.unstubAllGlobals());

  const setup = () => {
    const mock = mockClient(
      {
        Usage: (v: { groupBy: string[] }) => ({ data: { usage: v.groupBy.includes('DAY') ? usageByDay : usageTotals } }),
        Me: { data: { me: { __typename: 'User', id: '1', subject: 'dev:alice', email: null, displayName: null, platformAdmin: true } } },
        Tenants: { data: { tenants: [{ __typename: 'Tenant', id: '5', slug: 'acme', name: 'Acme', createdAt: '2026-11-01T00:00:00Z' }] } },
      },
      {
        ExportUsage: () => ({
          data: {
            exportUsage: {
              __typename: 'UsageExport',
              id: '9',
              periodEnd: '2026-11-22T03:00:00Z',
              format: 'FOCUS_CSV',
              rows: 3,
              bytes: 1234,
              sha256: 'abcdef0123456789',
              downloadUrl: '/api/exports/9',
            },
          },
        }),
      },
    );
    renderWith(<BillingPage />, { client: mock.client });
    return mock;
  };

  it('shows cost and GPU-hours per project with exact amounts', async () => {
    const { executed } = setup();
    const grid = await screen.findByRole('grid');
    const vision = within(grid).getByText('vision').closest('[role="row"]') as HTMLElement;
    expect(within(vision).getByText('36.00')).toBeInTheDocument();
    expect(within(vision).getByText('12.00')).toBeInTheDocument();
    expect(screen.getByText('Cost per day by project')).toBeInTheDocument();
    await userEvent.setup().click(screen.getByRole('button', { name: 'GPU model' }));
    await waitFor(() =>
      expect(executed.some((e) => JSON.stringify(e.variables).includes('"groupBy":["DAY","GPU_MODEL"]'))).toBe(true),
    );
  });

  it('regrouping shows only what the API returns for the new grouping, however often it switches', async () => {
    const byCluster = {
      ...usageTotals,
      rows: [
        { ...usageTotals.rows[0]!, project: null, cluster: 'sim-east' },
        { ...usageTotals.rows[1]!, project: null, cluster: 'sim-west' },
      ],
    };
    let clusterAnswered = false;
    const mock = mockClient({
      Usage: (v: { groupBy: string[] }) => {
        if (v.groupBy.includes('CLUSTER') && !clusterAnswered) return undefined as never; // still loading
        const totals = v.groupBy.includes('CLUSTER') ? byCluster : usageTotals;
        return { data: { usage: v.groupBy.includes('DAY') ? { ...totals, rows: totals.rows.map((r) => ({ ...r, day: '2026-11-20' })) } : totals } };
      },
      Me: { data: { me: { __typename: 'User', id: '1', subject: 'dev:alice', email: null, displayName: null, platformAdmin: true } } },
      Tenants: { data: { tenants: [] } },
    });
    renderWith(<BillingPage />, { client: mock.client });
    const user = userEvent.setup();
    await screen.findByLabelText('Usage by project');
    await user.click(screen.getByRole('button', { name: 'Cluster' }));
    // Still loading: the project rows stay project rows, never a "—" cluster.
    expect(screen.getByRole('status')).toHaveTextContent('Loading usage by cluster');
    expect(screen.queryByText('—')).toBeNull();
    expect(screen.getByLabelText('Usage by project')).toBeInTheDocument();
    clusterAnswered = true;
    for (const name of ['Project', 'Cluster', 'Project', 'Cluster']) {
      await user.click(screen.getByRole('button', { name }));
    }
    const grid = await screen.findByLabelText('Usage by cluster');
    await waitFor(() => expect(within(grid).getAllByRole('row')).toHaveLength(3)); // header + 2
    expect(within(grid).getByText('sim-east')).toBeInTheDocument();
    expect(within(grid).getByText('sim-west')).toBeInTheDocument();
    expect(within(grid).queryByText('—')).toBeNull();
  });

  it('exports FOCUS CSV and downloads the file with the session', async () => {
    const { calls } = setup();
    const fetch = vi.fn(
      async () => new Response('BilledCost\r\n1\r\n', { headers: { 'content-disposition': 'attachment; filename="grus-focus.csv"' } }),
    );
    vi.stubGlobal('fetch', fetch);
    const createObjectURL = vi.fn(() => 'blob:focus');
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL, revokeObjectURL: vi.fn() }));
    const clicked = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => {});
    await screen.findByRole('grid');
    await userEvent.setup().click(screen.getByRole('button', { name: 'Download FOCUS CSV' }));
    expect(await screen.findByText(/Downloaded grus-focus.csv \(\d{4}-\d{2}( up to [^)]+)?\): 3 charge rows/)).toBeInTheDocument();
    const exportCall = calls.find((c) => c.name === 'ExportUsage')!;
    expect(exportCall.variables).toMatchObject({ period: { month: currentMonth(new Date()), toDate: true }, format: 'FOCUS_CSV', tenantId: null });
    expect(fetch).toHaveBeenCalledWith('/api/exports/9', expect.objectContaining({ credentials: 'same-origin' }));
    expect(clicked).toHaveBeenCalled();
    clicked.mockRestore();
  });

  it('offers FOCUS exports only to whoever may export: a member sees none, a tenant admin their tenant', async () => {
    const tenant = (id: string, slug: string, myRole: string | null) => ({
      __typename: 'Tenant',
      id,
      slug,
      name: slug,
      createdAt: '2026-11-01T00:00:00Z',
      myRole,
    });
    const page = (myRoles: (string | null)[]) =>
      mockClient({
        Usage: (v: { groupBy: string[] }) => ({ data: { usage: v.groupBy.includes('DAY') ? usageByDay : usageTotals } }),
        Me: { data: { me: { __typename: 'User', id: '2', subject: 'dev:bob', email: null, displayName: null, platformAdmin: false } } },
        Tenants: { data: { tenants: [tenant('5', 'acme', myRoles[0]!), tenant('6', 'lab', myRoles[1]!)] } },
      }).client;
    const { unmount } = renderWith(<BillingPage />, { client: page([null, null]) });
    await screen.findByRole('grid');
    expect(screen.queryByRole('button', { name: 'Download FOCUS CSV' })).toBeNull();
    expect(screen.queryByLabelText('Export scope')).toBeNull();
    unmount();
    renderWith(<BillingPage />, { client: page([null, 'TENANT_ADMIN']) });
    await screen.findByRole('grid');
    expect(screen.getByRole('button', { name: 'Download FOCUS CSV' })).toBeEnabled();
    expect(screen.getByLabelText('Export scope')).toHaveTextContent('lab (lab)');
  });

  it('shows the empty state', async () => {
    const empty = { ...usageTotals, rows: [] };
    const mock = mockClient({ Usage: { data: { usage: empty } }, Me: { data: undefined }, Tenants: { data: { tenants: [] } } });
    renderWith(<BillingPage />, { client: mock.client });
    expect(await screen.findByText('No usage in this period')).toBeInTheDocument();
  });
});
