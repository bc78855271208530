import { cleanup, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { CombinedError } from 'urql';
import { describe, expect, it } from 'vitest';
import { clusters } from '../../test/fixtures';
import { mockClient, renderWith } from '../../test/render';
import { AdminPage } from './AdminPage';
import { priceInput } from './AdminView';

const me = (platformAdmin: boolean) => ({
  data: { me: { __typename: 'User', id: '1', subject: 'dev:alice', email: null, displayName: null, platformAdmin } },
});
const price = {
  __typename: 'PriceBookEntry',
  id: '1',
  gpuModel: 'H100-80GB',
  listPricePerGpuHour: '3.000000',
  contractedPricePerGpuHour: '2.500000',
  currency: 'USD',
  effectiveFrom: '2026-11-01T00:00:00Z',
  effectiveTo: null,
};
const token = {
  __typename: 'ApiToken',
  id: 't1',
  name: 'ci',
  prefix: 'grus_ab12',
  createdAt: '2026-11-01T00:00:00Z',
  expiresAt: '2027-01-30T00:00:00Z',
  revokedAt: null,
  lastUsedAt: null,
  scopes: ['READ', 'WRITE'],
};
const agent = (id: string, t: string) => ({
  __typename: 'AgentTokenPayload',
  agentToken: t,
  helmInstallCommand: `helm install grus-agent ./helm/grus-agent --set agentToken=${t} --set clusterId=${id}`,
  cluster: { __typename: 'Cluster', id, displayName: null },
});

const share = (weight: number, gpu?: number, limit?: number) => ({
  __typename: 'ShareSettings',
  weight,
  guarantees: gpu ? [{ __typename: 'ResourceAmount', resource: 'gpu', amount: gpu }] : [],
  limits: limit !== undefined ? [{ __typename: 'ResourceAmount', resource: 'gpu', amount: limit }] : [],
});

const rights = (any: boolean) => ({
  __typename: 'TenantRights',
  maxPriorityClass: 'high',
  mayPreempt: true,
  reclaimFromAny: any,
  reclaimFrom: [] as string[],
});

function setup(platformAdmin: boolean, administers: string[] = platformAdmin ? ['5', '6'] : []) {
  const myRole = (id: string) => (administers.includes(id) ? (platformAdmin ? 'PLATFORM_ADMIN' : 'TENANT_ADMIN') : null);
  const mock = mockClient(
    {
      Me: me(platformAdmin),
      Tenants: {
        data: {
          tenants: [
            {
              __typename: 'Tenant',
              id: '5',
              slug: 'acme',
              name: 'Acme',
              createdAt: '2026-11-01T00:00:00Z',
              myRole: myRole('5'),
              rights: rights(true),
              share: share(1, 8000),
            },
            {
              __typename: 'Tenant',
              id: '6',
              slug: 'lab',
              name: 'Lab',
              createdAt: '2026-11-01T00:00:00Z',
              myRole: myRole('6'),
              rights: { ...rights(false), reclaimFrom: ['5'] },
              share: share(2),
            },
          ],
        },
      },
      PriceBook: { data: { priceBook: [price] } },
      ApiTokens: { data: { apiTokens: [token] } },
      Clusters: { data: { clusters } },
    },
    {
      SetTenantShare: (v: { tenantId: string; weight: number }) => ({
        data: { setTenantShare: { __typename: 'Tenant', id: v.tenantId, share: share(v.weight, 4500) } },
      }),
      SetTenantRights: (v: { tenantId: string }) => ({
        data: { setTenantRights: { __typename: 'Tenant', id: v.tenantId, rights: { ...rights(true), maxPriorityClass: 'critical' } } },
      }),
      RegisterCluster: (v: { id: string }) => ({ data: { registerCluster: agent(v.id, 'agent-secret-1') } }),
      RotateAgentToken: (v: { clusterId: string }) => ({ data: { rotateAgentToken: agent(v.clusterId, 'agent-secret-2') } }),
      SetPrice: () => ({ error: new CombinedError({ graphQLErrors: [{ message: 'overlaps a price', extensions: { code: 'CONFLICT' } }] }) }),
      CreateApiToken: () => ({
        data: { createApiToken: { __typename: 'CreatedApiToken', secret: 'grus_secret_xyz', id: 't2', name: 'laptop', expiresAt: '2027-01-01T00:00:00Z' } },
      }),
      RevokeApiToken: () => ({ data: { revokeApiToken: { __typename: 'ApiToken', id: 't1', revokedAt: '2026-11-22T00:00:00Z' } } }),
    },
  );
  renderWith(<AdminPage />, { client: mock.client });
  return mock;
}

describe('AdminPage', () => {
  it('registers a cluster and shows its one-time token with the helm command; rotates a token', async () => {
    const { calls } = setup(true);
    const user = userEvent.setup({ delay: null });
    await user.type(await screen.findByLabelText(/Cluster id/), 'east-2');
    await user.type(screen.getByLabelText('Display name'), 'East 2');
    await user.click(screen.getByRole('button', { name: 'Register cluster' }));
    expect(calls.find((c) => c.name === 'RegisterCluster')?.variables).toEqual({ id: 'east-2', displayName: 'East 2' });
    expect(await screen.findByTestId('agent-token')).toHaveTextContent('agent-secret-1');
    expect(screen.getByTestId('helm-command')).toHaveTextContent('--set agentToken=agent-secret-1');
    await user.click(screen.getByRole('button', { name: 'Rotate the agent token of west-1' }));
    expect(await screen.findByText('agent-secret-2')).toBeInTheDocument();
    expect(screen.queryByText('agent-secret-1')).toBeNull();
  });

  it('lists tenants with their rights; a platform admin changes them', async () => {
    const { calls } = setup(true);
    const user = userEvent.setup({ delay: null });
    expect(await screen.findByText('any tenant')).toBeInTheDocument();
    expect(screen.getByText('own, acme')).toBeInTheDocument();
    const form = screen.getByRole('form', { name: 'Tenant rights' });
    expect(within(form).getByRole('button', { name: 'Save rights' })).toBeDisabled();
    await user.click(within(form).getByLabelText('Highest priority'));
    await user.click(await screen.findByRole('option', { name: 'critical' }));
    await user.click(within(form).getByLabelText('May preempt'));
    await user.click(within(form).getByRole('button', { name: 'Save rights' }));
    expect(calls.find((c) => c.name === 'SetTenantRights')?.variables).toEqual({
      tenantId: '5',
      maxPriorityClass: 'critical',
      mayPreempt: false,
      reclaimFromAny: true,
    });
    expect(await screen.findByText('Rights of acme saved')).toBeInTheDocument();
  });

  it('shows tenants\' fair shares in GPUs; a platform admin sets weight, guaranteed GPUs and a limit', async () => {
    const { calls } = setup(true);
    const user = userEvent.setup({ delay: null });
    expect(await screen.findByText('weight 1 · guaranteed 8 GPU')).toBeInTheDocument();
    expect(screen.getByText('weight 2')).toBeInTheDocument();
    const form = screen.getByRole('form', { name: 'Fair share of tenant acme' });
    const save = within(form).getByRole('button', { name: 'Save fair share' });
    expect(save).toBeDisabled();
    const gpus = within(form).getByLabelText('Guaranteed GPUs');
    expect(gpus).toHaveValue('8');
    await user.clear(gpus);
    await user.type(gpus, 'many');
    expect(within(form).getByText('GPUs, 0 or more (e.g. 8 or 0.5)')).toBeInTheDocument();
    expect(save).toBeDisabled();
    await user.clear(gpus);
    await user.type(gpus, '4.5');
    await user.clear(within(form).getByLabelText('Fair-share weight'));
    await user.type(within(form).getByLabelText('Fair-share weight'), '3');
    const limit = within(form).getByLabelText('GPU limit');
    expect(limit).toHaveValue('');
    await user.type(limit, '2');
    expect(within(form).getByText('not below the guarantee')).toBeInTheDocument();
    expect(save).toBeDisabled();
    await user.clear(limit);
    await user.type(limit, '16');
    await user.click(save);
    expect(calls.find((c) => c.name === 'SetTenantShare')?.variables).toEqual({
      tenantId: '5',
      weight: 3,
      guarantees: [{ resource: 'gpu', amount: 4500 }],
      limits: [{ resource: 'gpu', amount: 16000 }],
    });
    expect(await screen.findByText('Fair share of acme saved')).toBeInTheDocument();
  });

  it('offers project creation only in the tenants the caller administers', async () => {
    setup(false);
    expect(await screen.findByText('any tenant')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Create project' })).toBeNull();
    cleanup();
    setup(false, ['6']);
    expect(await screen.findByText('any tenant')).toBeInTheDocument();
    const form = screen.getByRole('form', { name: 'Create a project' });
    await userEvent.setup().click(within(form).getByLabelText('Tenant'));
    const options = screen.getAllByRole('option').map((o) => o.textContent ?? '');
    expect(options.some((o) => o.includes('lab'))).toBe(true);
    expect(options.some((o) => o.includes('acme'))).toBe(false);
  });

  it('lists prices; a refused price shows the reason', async () => {
    const { calls } = setup(true);
    const user = userEvent.setup({ delay: null });
    const book = await screen.findByRole('form', { name: 'Set a price' });
    expect(screen.getByText('3.000000')).toBeInTheDocument();
    await user.type(within(book).getByLabelText(/GPU model/), 'T4');
    await user.type(within(book).getByLabelText(/List price/), '0.35');
    await user.type(within(book).getByLabelText(/Effective from/), '2026-11-01');
    await user.click(within(book).getByRole('button', { name: 'Set price' }));
    expect(calls.find((c) => c.name === 'SetPrice')?.variables).toEqual({
      gpuModel: 'T4',
      list: '0.35',
      contracted: null,
      currency: null,
      from: '2026-11-01T00:00:00Z',
      to: null,
    });
    expect(await screen.findByText(/overlaps a price/)).toBeInTheDocument();
  });

  it('creates a token (secret shown once) and revokes one', async () => {
    const { calls } = setup(false);
    const user = userEvent.setup({ delay: null });
    await user.type(await screen.findByLabelText(/Token name/), 'laptop');
    await user.click(screen.getByRole('button', { name: 'Create token' }));
    expect(calls.find((c) => c.name === 'CreateApiToken')?.variables).toEqual({ name: 'laptop', days: 90 });
    expect(await screen.findByTestId('token-secret')).toHaveTextContent('grus_secret_xyz');
    expect(screen.getByText('read, write')).toBeInTheDocument();
    // A read-only token asks for the READ scope alone.
    await user.type(screen.getByLabelText(/Token name/), 'dashboard');
    await user.click(screen.getByLabelText('Read only'));
    await user.click(screen.getByRole('button', { name: 'Create token' }));
    const created = calls.filter((c) => c.name === 'CreateApiToken');
    expect(created[created.length - 1]?.variables).toEqual({ name: 'dashboard', days: 90, scopes: ['READ'] });
    await user.click(screen.getByRole('button', { name: 'Revoke ci' }));
    // It asks first; going back revokes nothing.
    await user.click(within(screen.getByRole('dialog', { name: 'Revoke ci?' })).getByRole('button', { name: 'Back' }));
    expect(calls.some((c) => c.name === 'RevokeApiToken')).toBe(false);
    await user.click(await screen.findByRole('button', { name: 'Revoke ci' }));
    await user.click(within(screen.getByRole('dialog', { name: 'Revoke ci?' })).getByRole('button', { name: 'Revoke token' }));
    expect(calls.some((c) => c.name === 'RevokeApiToken')).toBe(true);
    // Not a platform admin: no cluster registration, no price form, no rights form.
    expect(screen.queryByRole('form', { name: 'Register a cluster' })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Tenant rights' })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Fair share of tenant acme' })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Set a price' })).toBeNull();
  });

  it('validates a price before sending it', () => {
    const f = { gpuModel: 'T4', list: '0.35', contracted: '', currency: 'usd', from: '2026-11-01', to: '' };
    expect(priceInput(f)).toMatchObject({ currency: 'USD', to: null });
    expect(priceInput({ ...f, list: '1.2345678' })).toMatch(/List price/);
    expect(priceInput({ ...f, to: '2026-10-01' })).toMatch(/after/);
    expect(priceInput({ ...f, gpuModel: ' ' })).toMatch(/required/);
  });
});
