import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { Route, Routes, useLocation } from 'react-router-dom';
import { CombinedError } from 'urql';
import { mockClient, renderWith } from '../../test/render';
import { dryRunSummary, SubmitPage } from './SubmitPage';

// CodeMirror needs a real layout engine; a textarea stands in for it here.
vi.mock('../../components/YamlEditor', () => ({
  YamlEditor: ({ value, onChange, label }: { value: string; onChange?: (v: string) => void; label: string }) => (
    <textarea aria-label={label} value={value} onChange={(e) => onChange?.(e.target.value)} />
  ),
}));

const projects = {
  data: {
    projects: [
      {
        __typename: 'Project',
        id: '3',
        tenantId: '1',
        slug: 'vision',
        name: 'Vision',
        myRole: 'MEMBER',
        createdAt: '2026-11-20T10:00:00Z',
        queues: [{ __typename: 'Queue', id: '4', name: 'default', weight: 1, canBorrow: true, quotas: [], usage: [] }],
      },
    ],
  },
};

function setup(submitAnswer?: () => { data?: unknown; error?: unknown }) {
  const { client, calls } = mockClient(
    { Projects: projects },
    {
      DryRunJob: () => ({
        data: {
          dryRunJob: {
            __typename: 'DryRunResult',
            admitted: true,
            borrowed: true,
            cluster: null,
            quotaExceeded: null,
            whyPending: {
              __typename: 'WhyPending',
              summary: 'no cluster has 8 free A100-80GB',
              reasons: [{ __typename: 'PendingReason', cluster: 'east', stage: 'capacity', reason: '4 nodes have only 2 free GPUs' }],
            },
          },
        },
      }),
      SubmitJob:
        submitAnswer ??
        (() => ({
          data: { submitJob: { __typename: 'SubmitJobPayload', borrowed: false, budgetWarning: null, job: { __typename: 'Job', id: '42', name: 'train', state: 'PENDING' } } },
        })),
    },
  );
  renderWith(
    <Routes>
      <Route path="/submit" element={<SubmitPage />} />
      <Route path="/jobs/:id" element={<JobPageStandIn />} />
    </Routes>,
    { path: '/submit?project=vision', client },
  );
  return calls;
}

/** The job page as far as these tests care: it shows the notice the submit page passes on. */
function JobPageStandIn() {
  const notice = (useLocation().state as { notice?: string } | null)?.notice;
  return <p>job page{notice ? `: ${notice}` : ''}</p>;
}

describe('SubmitPage', () => {
  it('says why a spent budget refuses the job', async () => {
    const refused = new CombinedError({
      graphQLErrors: [
        {
          message: 'budget exceeded in project vision: 1.20 GPU-hours of its monthly budget of 1.00 GPU-hours spent or committed by running work',
          extensions: { code: 'BUDGET_EXCEEDED', level: 'project', name: 'vision' },
        },
      ],
    });
    setup(() => ({ error: refused }));
    const user = userEvent.setup({ delay: null });
    await user.type(screen.getByLabelText(/Job name/), 'train');
    await user.type(screen.getByLabelText(/Image/), 'busybox');
    await user.click(screen.getByRole('button', { name: 'Submit' }));
    expect(await screen.findByText(/budget exceeded in project vision/)).toBeInTheDocument();
    expect(screen.queryByText(/job page/)).toBeNull();
  });

  it('passes a budget warning on to the job page', async () => {
    const warning = 'the monthly budget of project vision is 85% used (warning at 80%)';
    setup(() => ({
      data: { submitJob: { __typename: 'SubmitJobPayload', borrowed: false, budgetWarning: warning, job: { __typename: 'Job', id: '42', name: 'train', state: 'PENDING' } } },
    }));
    const user = userEvent.setup({ delay: null });
    await user.type(screen.getByLabelText(/Job name/), 'train');
    await user.type(screen.getByLabelText(/Image/), 'busybox');
    await user.click(screen.getByRole('button', { name: 'Submit' }));
    expect(await screen.findByText(`job page: ${warning}`)).toBeInTheDocument();
  });

  it('shows every client-side error on the form and submits nothing', async () => {
    const calls = setup();
    const user = userEvent.setup();
    await user.type(screen.getByLabelText(/Job name/), 'Bad Name');
    await user.clear(screen.getByLabelText('Replicas'));
    await user.type(screen.getByLabelText('Replicas'), 'two');
    await user.click(screen.getByRole('button', { name: 'Submit' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('3 problems');
    expect(screen.getByLabelText(/Job name/)).toHaveAttribute('aria-invalid', 'true');
    expect(screen.getByText('must be a whole number')).toBeInTheDocument();
    expect(screen.getByText('required')).toBeInTheDocument(); // the image
    expect(calls).toEqual([]);
  });

  it('the form and the YAML editor submit the same JobInput', async () => {
    const calls = setup();
    const user = userEvent.setup();
    await user.type(screen.getByLabelText(/Job name/), 'train');
    await user.type(screen.getByLabelText(/Image/), 'busybox');
    await user.type(screen.getByLabelText('Labels'), 'team=nlp');
    // to YAML and back keeps the job
    await user.click(screen.getByRole('tab', { name: 'YAML' }));
    const yaml = screen.getByLabelText('Job YAML') as HTMLTextAreaElement;
    expect(yaml.value).toContain('name: train');
    expect(yaml.value).toContain('project: vision');
    expect(yaml.value).toContain('image: busybox');
    await user.click(screen.getByRole('button', { name: 'Submit' }));
    await screen.findByText('job page');
    expect(calls).toHaveLength(1);
    const fromYaml = calls[0]!.variables;
    expect(fromYaml).toEqual({
      input: {
        name: 'train',
        project: 'vision',
        priority: 'normal',
        labels: [{ key: 'team', value: 'nlp' }],
        tasks: [{ name: 'main', replicas: 1, image: 'busybox', resources: { gpus: 1 } }],
      },
    });
  });

  it('marks YAML errors and stays on the YAML tab', async () => {
    setup();
    const user = userEvent.setup();
    await user.click(screen.getByRole('tab', { name: 'YAML' }));
    fireEvent.change(screen.getByLabelText('Job YAML'), { target: { value: 'name: x\nproject: vision\ntasks: [{ nmae: a }]' } });
    await user.click(screen.getByRole('tab', { name: 'Form' }));
    await waitFor(() => expect(screen.getByRole('alert')).toHaveTextContent('tasks.0.nmae'));
    expect(screen.getByRole('tab', { name: 'YAML' })).toHaveAttribute('aria-selected', 'true');
  });

  it('dry runs the job: admission verdict and why no cluster takes it, nothing stored', async () => {
    const calls = setup();
    const user = userEvent.setup({ delay: null });
    await user.type(screen.getByLabelText(/Job name/), 'train');
    await user.type(screen.getByLabelText(/Image/), 'busybox');
    await user.click(screen.getByRole('button', { name: 'Dry run' }));
    const result = await screen.findByTestId('dry-run');
    expect(result).toHaveTextContent('Would be admitted above the queue\'s guarantee (borrowed, preemptible), but no cluster can take it now');
    expect(within(result).getByRole('table', { name: 'Why pending per cluster' })).toHaveTextContent('4 nodes have only 2 free GPUs');
    expect(calls.map((c) => c.name)).toEqual(['DryRunJob']);
    expect(screen.queryByText('job page')).toBeNull();
    // The verdict was about the form as it was: changing the form takes it away.
    await user.type(screen.getByLabelText(/Job name/), '-2');
    expect(screen.queryByTestId('dry-run')).toBeNull();
  });

  it('says why admission would refuse a job', () => {
    const r = { admitted: false, borrowed: false, cluster: null, whyPending: null };
    const q = { queue: 'default', resource: 'gpu', used: 15000, demand: 2000, limit: 16000 };
    expect(dryRunSummary({ ...r, quotaExceeded: q })).toEqual({
      severity: 'error',
      text: 'Admission would refuse it: queue default at its gpu limit (15 GPU used + 2 GPU asked > 16 GPU).',
    });
    expect(dryRunSummary({ ...r, admitted: true, quotaExceeded: null, cluster: 'east' }).text).toBe('Would be admitted and dispatched to east now.');
  });
});
