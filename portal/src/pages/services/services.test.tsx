import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Route, Routes } from 'react-router-dom';
import { CombinedError } from 'urql';
import type { Client } from 'urql';
import { describe, expect, it } from 'vitest';
import { makeSubject } from 'wonka';
import { serviceDetail, serviceSummary } from '../../test/fixtures';
import { mockClient, renderWith } from '../../test/render';
import { emptyServiceForm, formToServiceInput } from '../../services/serviceInput';
import { NewServicePage } from './NewServicePage';
import { autoscalingSummary, canManageService, desiredSeries, replicaRevision, signalText } from './serviceFormat';
import { ServicePage } from './ServicePage';
import { ServicesPage } from './ServicesPage';

const project = (myRole: string) => ({
  __typename: 'Project',
  id: '3',
  tenantId: '1',
  slug: 'vision',
  name: 'Vision',
  myRole,
  createdAt: '2026-11-20T10:00:00Z',
  queues: [{ __typename: 'Queue', id: '4', name: 'default', weight: 1, canBorrow: true, quotas: [], usage: [] }],
});
const me = (subject: string) => ({
  data: { me: { __typename: 'User', id: '1', subject, email: null, displayName: null, platformAdmin: false } },
});
const validation = (field: string, message: string) =>
  new CombinedError({ graphQLErrors: [{ message: 'invalid input', extensions: { code: 'VALIDATION', fields: [{ field, message }] } }] });

describe('service formatting', () => {
  it('summarises the autoscaling rule and its signal in the units people read', () => {
    expect(autoscalingSummary(serviceSummary.autoscaling)).toBe('request rate, 10/s per replica');
    expect(autoscalingSummary({ metric: 'GPU_UTILIZATION', target: 60, scaleDownDelaySeconds: 90 }, { delay: true })).toBe(
      'GPU utilization 60 %; scales down after 1m 30s',
    );
    expect(autoscalingSummary(null)).toBe('none');
    expect(signalText(12.345, 'REQUEST_RATE')).toBe('12.35 req/s');
    expect(signalText(null, 'REQUEST_RATE')).toBe('manual');
    expect(replicaRevision({ service: { revision: 3 } })).toBe(3);
    expect(replicaRevision({ tasks: [] })).toBeNull();
  });

  it('lets the owner (a member) or a project admin act, not a viewer or another member', () => {
    expect(canManageService('dev:alice', 'dev:alice', 'MEMBER')).toBe(true);
    expect(canManageService('dev:alice', 'dev:bob', 'MEMBER')).toBe(false);
    expect(canManageService('dev:alice', 'dev:bob', 'PROJECT_ADMIN')).toBe(true);
    expect(canManageService('dev:alice', 'dev:bob', 'PLATFORM_ADMIN')).toBe(true);
    expect(canManageService('dev:alice', 'dev:alice', 'VIEWER')).toBe(false);
    expect(canManageService('dev:alice', undefined, undefined)).toBe(false);
  });

  it('draws the desired count from the oldest change to now', () => {
    const now = new Date('2026-11-22T03:00:00Z');
    expect(desiredSeries(serviceDetail.scalingHistory, 3, now).map((p) => [p.at.toISOString(), p.replicas])).toEqual([
      ['2026-11-22T02:00:00.000Z', 1],
      ['2026-11-22T02:00:00.000Z', 2],
      ['2026-11-22T02:30:00.000Z', 3],
      ['2026-11-22T03:00:00.000Z', 3],
    ]);
    expect(desiredSeries([], 3, now)).toEqual([]);
  });

  it('builds a ServiceInput from the form, with the server field paths for what it cannot read', () => {
    const form = {
      ...emptyServiceForm('vision'),
      name: 'chat',
      image: 'llm:1',
      command: 'serve\n--port=8000',
      gpuModels: 'A100-80GB',
      readinessPath: '/healthz',
      maxReplicas: '4',
      autoscaling: true,
      target: '12.5',
    };
    expect(formToServiceInput(form)).toEqual({
      errors: [],
      input: {
        name: 'chat',
        project: 'vision',
        image: 'llm:1',
        command: ['serve', '--port=8000'],
        port: 8000,
        resources: { gpus: 1, gpuModels: ['A100-80GB'] },
        readiness: { path: '/healthz' },
        minReplicas: 1,
        maxReplicas: 4,
        autoscaling: { metric: 'REQUEST_RATE', target: 12.5, scaleDownDelay: '5m' },
        rollout: { maxSurge: 1, maxUnavailable: 0 },
      },
    });
    const bad = formToServiceInput({ ...form, maxReplicas: 'four', gpus: 'x', target: '', scaleDownDelay: 'soon' });
    expect(bad.errors.map((e) => e.field)).toEqual([
      'resources.gpus',
      'maxReplicas',
      'autoscaling.target',
      'autoscaling.scaleDownDelay',
    ]);
  });
});

describe('ServicesPage', () => {
  it('lists the services with state, replicas, bounds and the autoscaling rule, and follows their projects live', async () => {
    const events = makeSubject<unknown>();
    let ready = 2;
    const { client, executed } = mockClient(
      {
        Services: () => ({ data: { services: [{ ...serviceSummary, readyReplicas: ready }] } }),
        Projects: { data: { projects: [project('MEMBER')] } },
      },
      {},
      { ProjectJobEvents: events.source },
    );
    renderWith(<ServicesPage />, { path: '/services', client });
    const link = await screen.findByRole('link', { name: 'chat' });
    expect(link).toHaveAttribute('href', '/services/vision/chat');
    const row = link.closest('[role="row"]') as HTMLElement;
    expect(within(row).getByText('PROGRESSING')).toBeInTheDocument();
    expect(within(row).getByText('vision')).toBeInTheDocument();
    expect(within(row).getByText('2/3')).toBeInTheDocument();
    expect(within(row).getByText('1–4')).toBeInTheDocument();
    expect(within(row).getByText('ghcr.io/acme/llm-server:1.5')).toBeInTheDocument();
    expect(within(row).getByText('request rate, 10/s per replica')).toBeInTheDocument();

    ready = 3;
    const before = executed.filter((e) => e.name === 'Services').length;
    events.next({ projectJobEvents: { __typename: 'JobEvent', id: '9', jobId: '53', toState: 'running' } });
    await waitFor(() => expect(executed.filter((e) => e.name === 'Services').length).toBeGreaterThan(before), { timeout: 3000 });
    await waitFor(() => expect(screen.getByText('3/3')).toBeInTheDocument());
  });

  it('says how to create the first service', async () => {
    const { client } = mockClient({ Services: { data: { services: [] } }, Projects: { data: { projects: [project('MEMBER')] } } });
    renderWith(<ServicesPage />, { path: '/services', client });
    expect(await screen.findByText('No services yet')).toBeInTheDocument();
    expect(screen.getByText('grus service apply -f svc.yaml')).toBeInTheDocument();
    for (const link of screen.getAllByRole('link', { name: 'New service' })) expect(link).toHaveAttribute('href', '/services/new');
  });
});

function servicePage(client: Client) {
  renderWith(
    <Routes>
      <Route path="/services/:project/:name" element={<ServicePage />} />
      <Route path="/services" element={<p>services list</p>} />
    </Routes>,
    { path: '/services/vision/chat', client },
  );
}

describe('ServicePage', () => {
  it('shows the header, replicas per cluster, the replicas and the scaling history, live; a viewer gets no actions', async () => {
    const events = makeSubject<unknown>();
    let state = 'PROGRESSING';
    const { client, executed } = mockClient(
      {
        Service: (v: { project: string; name: string }) => {
          expect(v).toMatchObject({ project: 'vision', name: 'chat' });
          return { data: { project: { __typename: 'Project', id: '3', slug: 'vision', myRole: 'VIEWER' }, service: { ...serviceDetail, state } } };
        },
        Me: me('dev:alice'),
      },
      {},
      { ProjectJobEvents: events.source },
    );
    servicePage(client);
    expect(await screen.findByTestId('service-state')).toHaveTextContent('PROGRESSING');
    expect(screen.getByTestId('service-revision')).toHaveTextContent('revision 2');
    expect(screen.getByTestId('service-condition')).toHaveTextContent('waiting for quota');
    expect(screen.getByText(/readiness \/healthz/)).toBeInTheDocument();
    expect(screen.getByTestId('service-autoscaling')).toHaveTextContent('request rate, 10/s per replica; scales down after 5m');
    expect(screen.getByTestId('service-utilization')).toHaveTextContent('GPU utilization: 60 % (mean of 2 running replicas)');

    const perCluster = screen.getByRole('table', { name: 'Replicas per cluster' });
    const rows = within(perCluster).getAllByRole('row').slice(1).map((r) => r.textContent);
    expect(rows).toEqual(['east-111http://chat.grus-vision.svc.cluster.local:8000/', 'west-111—', 'not placed yet10—']);

    const replicas = screen.getByRole('table', { name: 'Replicas' });
    expect(within(replicas).getByRole('link', { name: 'chat-52' })).toHaveAttribute('href', '/jobs/52');
    expect(within(replicas).getByText('1 (old)')).toBeInTheDocument();
    expect(within(replicas).getByText('80 %')).toBeInTheDocument();

    const history = screen.getByRole('table', { name: 'Scaling history' });
    const first = within(history).getAllByRole('row')[1]!;
    expect(first).toHaveTextContent('2 → 3');
    expect(first).toHaveTextContent('25 req/s');
    expect(first).toHaveTextContent('request rate above target');
    expect(within(history).getByText('manual')).toBeInTheDocument();
    expect(screen.getByTestId('desired-chart')).toBeInTheDocument();
    expect(within(screen.getByRole('table', { name: 'Revisions' })).getByText('ghcr.io/acme/llm-server:1.4')).toBeInTheDocument();

    // A viewer, even the one who created it: no actions.
    expect(screen.queryByRole('button', { name: 'Scale' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Set load' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Delete' })).toBeNull();

    // Live: a replica's job event refetches the service.
    state = 'READY';
    events.next({ projectJobEvents: { __typename: 'JobEvent', id: '9', jobId: '53', toState: 'running' } });
    await waitFor(() => expect(screen.getByTestId('service-state')).toHaveTextContent('READY'));
    expect(executed.filter((e) => e.name === 'Service').length).toBeGreaterThan(1);
  });

  it('lets its owner scale it, showing the server field error under its field, then set the load and delete it', async () => {
    let scaled = 0;
    const { client, calls } = mockClient(
      {
        Service: { data: { project: { __typename: 'Project', id: '3', slug: 'vision', myRole: 'MEMBER' }, service: serviceDetail } },
        Me: me('dev:alice'),
      },
      {
        ScaleService: () =>
          ++scaled === 1
            ? { error: validation('maxReplicas', 'must be at least 1 and at least minReplicas (2)') }
            : { data: { scaleService: { ...serviceSummary, minReplicas: 2, maxReplicas: 6 } } },
        SetServiceLoad: () => ({ data: { setServiceLoad: { ...serviceSummary, requestsPerSecond: 40 } } }),
        DeleteService: () => ({ data: { deleteService: { __typename: 'Service', id: '21', name: 'chat', project: 'vision', state: 'DELETED' } } }),
      },
    );
    servicePage(client);
    const user = userEvent.setup({ delay: null });
    await user.click(await screen.findByRole('button', { name: 'Scale' }));
    let dialog = await screen.findByRole('dialog', { name: 'Scale chat' });
    const min = within(dialog).getByLabelText('Min replicas');
    await user.clear(min);
    await user.type(min, '2');
    const max = within(dialog).getByLabelText('Max replicas');
    await user.clear(max);
    await user.type(max, '1');
    await user.click(within(dialog).getByRole('button', { name: 'Scale' }));
    expect(await within(dialog).findByText('must be at least 1 and at least minReplicas (2)')).toBeInTheDocument();
    expect(within(dialog).getByLabelText('Max replicas')).toHaveAttribute('aria-invalid', 'true');
    // The count was not touched: only the bounds are sent.
    expect(calls[0]).toEqual({ name: 'ScaleService', variables: { project: 'vision', name: 'chat', minReplicas: 2, maxReplicas: 1 } });
    await user.clear(max);
    await user.type(max, '6');
    await user.click(within(dialog).getByRole('button', { name: 'Scale' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls[1]?.variables).toEqual({ project: 'vision', name: 'chat', minReplicas: 2, maxReplicas: 6 });

    await user.click(screen.getByRole('button', { name: 'Set load' }));
    dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('REQUEST_RATE');
    const rate = within(dialog).getByLabelText('Request rate (requests per second)');
    expect(rate).toHaveValue('25');
    await user.clear(rate);
    await user.type(rate, '40.5');
    await user.click(within(dialog).getByRole('button', { name: 'Set load' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls[2]).toEqual({ name: 'SetServiceLoad', variables: { project: 'vision', name: 'chat', requestsPerSecond: 40.5 } });

    await user.click(screen.getByRole('button', { name: 'Delete' }));
    dialog = await screen.findByRole('dialog', { name: 'Delete chat?' });
    await user.click(within(dialog).getByRole('button', { name: 'Delete service' }));
    expect(await screen.findByText('services list')).toBeInTheDocument();
    expect(calls[3]).toEqual({ name: 'DeleteService', variables: { project: 'vision', name: 'chat' } });
  });

  it('says when there is no such service', async () => {
    const { client } = mockClient({
      Service: { error: new CombinedError({ graphQLErrors: [{ message: 'service not found', extensions: { code: 'NOT_FOUND' } }] }) },
      Me: me('dev:alice'),
    });
    servicePage(client);
    expect(await screen.findByRole('region', { name: 'Not found' })).toHaveTextContent('There is no such service, or you may not see it.');
  });
});

describe('NewServicePage', () => {
  function setup(answer: () => { data?: unknown; error?: unknown }) {
    const { client, calls } = mockClient({ Projects: { data: { projects: [project('MEMBER')] } } }, { ApplyService: answer });
    renderWith(
      <Routes>
        <Route path="/services/new" element={<NewServicePage />} />
        <Route path="/services/:project/:name" element={<p>service page</p>} />
      </Routes>,
      { path: '/services/new?project=vision', client },
    );
    return calls;
  }

  it('shows the server field error under its field', async () => {
    const calls = setup(() => ({ error: validation('maxReplicas', 'must be 1 to 100') }));
    const user = userEvent.setup({ delay: null });
    await user.type(await screen.findByLabelText(/Service name/), 'chat');
    await user.type(screen.getByLabelText(/Image/), 'llm:1');
    await user.type(screen.getByLabelText('Max replicas'), '500');
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    expect(await screen.findByText('must be 1 to 100')).toBeInTheDocument();
    expect(screen.getByLabelText('Max replicas')).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getByLabelText(/Service name/)).toHaveAttribute('aria-invalid', 'false');
    expect(screen.getByRole('alert')).toHaveTextContent('maxReplicas: must be 1 to 100');
    expect(calls).toHaveLength(1);
    expect(calls[0]?.variables).toMatchObject({ input: { name: 'chat', project: 'vision', image: 'llm:1', maxReplicas: 500, port: 8000 } });
  });

  it('applies a service with autoscaling in the units typed and opens its page', async () => {
    const calls = setup(() => ({ data: { applyService: { __typename: 'ApplyServicePayload', applied: 'CREATED', service: serviceSummary } } }));
    const user = userEvent.setup({ delay: null });
    const type = (label: string | RegExp, value: string) => fireEvent.change(screen.getByLabelText(label), { target: { value } });
    await screen.findByLabelText(/Service name/);
    type(/Service name/, 'chat');
    type(/Image/, 'llm:1');
    type('GPUs per replica', '2');
    await user.click(screen.getByLabelText('Autoscale between the bounds'));
    await user.click(screen.getByLabelText('Metric'));
    await user.click(await screen.findByRole('option', { name: 'GPU utilization' }));
    type('Target GPU utilization', '60');
    await user.click(screen.getByRole('button', { name: 'Apply' }));
    expect(await screen.findByText('service page')).toBeInTheDocument();
    expect(calls[0]?.variables).toMatchObject({
      input: { resources: { gpus: 2 }, autoscaling: { metric: 'GPU_UTILIZATION', target: 60, scaleDownDelay: '5m' } },
    });
  });

  it('checks what it can before sending', async () => {
    const calls = setup(() => ({ data: null }));
    const user = userEvent.setup({ delay: null });
    await user.click(await screen.findByRole('button', { name: 'Apply' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('2 problems');
    expect(screen.getByLabelText(/Image/)).toHaveAttribute('aria-invalid', 'true');
    expect(calls).toEqual([]);
  });
});
