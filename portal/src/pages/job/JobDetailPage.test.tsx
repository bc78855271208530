import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Route, Routes } from 'react-router-dom';
import { CombinedError } from 'urql';
import type { Client } from 'urql';
import { describe, expect, it, vi } from 'vitest';
import { makeSubject } from 'wonka';
import { jobDetail } from '../../test/fixtures';
import { mockClient, renderWith } from '../../test/render';
import { READINGS_MS } from '../../api/live';
import { JobDetailPage } from './JobDetailPage';

vi.mock('../../components/YamlEditor', () => ({
  YamlEditor: ({ value, label }: { value: string; label: string }) => <pre aria-label={label}>{value}</pre>,
}));

const page = (client: Client) =>
  renderWith(
    <Routes>
      <Route path="/jobs/:id" element={<JobDetailPage />} />
    </Routes>,
    { path: '/jobs/1', client },
  );

describe('JobDetailPage', () => {
  it('follows jobEvents live, shows dispatches and utilization, and reprioritises', async () => {
    const events = makeSubject<unknown>();
    let state = 'RUNNING';
    const { client, calls, executed } = mockClient(
      { Job: () => ({ data: { job: { ...jobDetail, state } } }) },
      { SetJobPriority: () => ({ data: { setJobPriority: { __typename: 'Job', id: '1', priority: 10000, priorityClass: 'critical', updatedAt: '2026-11-20T10:06:00Z' } } }) },
      { JobEvents: events.source },
    );
    page(client);
    expect(await screen.findByTestId('job-state')).toHaveTextContent('RUNNING');
    expect(screen.getByText(/submitted by Alice/)).toBeInTheDocument();
    const dispatches = screen.getByRole('table', { name: 'Dispatch history' });
    expect(within(dispatches).getByText(/rejected — no node has 2 free H100-80GB/)).toBeInTheDocument();
    expect(screen.getByTestId('utilization')).toHaveTextContent('busy now 64 %');

    state = 'SUCCEEDED';
    events.next({ jobEvents: { __typename: 'JobEvent', id: '9', toState: 'succeeded' } });
    await waitFor(() => expect(screen.getByTestId('job-state')).toHaveTextContent('SUCCEEDED'));
    expect(executed.filter((e) => e.name === 'Job').length).toBeGreaterThan(1);

    state = 'RUNNING';
    events.next({ jobEvents: { __typename: 'JobEvent', id: '10', toState: 'running' } });
    await waitFor(() => expect(screen.getByTestId('job-state')).toHaveTextContent('RUNNING'));
    const user = userEvent.setup({ delay: null });
    await user.click(screen.getByLabelText('Priority'));
    await user.click(await screen.findByRole('option', { name: 'critical' }));
    expect(calls.find((c) => c.name === 'SetJobPriority')?.variables).toEqual({ id: '1', priority: 'critical' });
  });

  it("a waiting job's place in line follows the other jobs of its project", async () => {
    const others = makeSubject<unknown>();
    let position = 3;
    const { client } = mockClient(
      { Job: () => ({ data: { job: { ...jobDetail, state: 'ADMITTED', queuePosition: position } } }) },
      {},
      { ProjectJobEvents: others.source },
    );
    page(client);
    expect(await screen.findByTestId('job-position')).toHaveTextContent('Position 3 in vision/default');
    position = 2;
    others.next({ projectJobEvents: { __typename: 'JobEvent', id: '11', jobId: '2', toState: 'running' } });
    await waitFor(() => expect(screen.getByTestId('job-position')).toHaveTextContent('Position 2 in vision/default'));
  });

  it("reads a live job's readings again every 10 s without an event, and an ended job's not", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      let state = 'SCHEDULED';
      const { client, executed } = mockClient({ Job: () => ({ data: { job: { ...jobDetail, state } } }) });
      page(client);
      await screen.findByRole('heading', { name: 'train-llama' });
      const reads = () => executed.filter((e) => e.name === 'Job').length;
      const before = reads();
      await act(async () => {
        vi.advanceTimersByTime(READINGS_MS + 100);
      });
      await waitFor(() => expect(reads()).toBeGreaterThan(before));
      state = 'SUCCEEDED';
      await act(async () => {
        vi.advanceTimersByTime(READINGS_MS + 100);
      });
      await waitFor(() => expect(screen.getByTestId('job-state')).toHaveTextContent('SUCCEEDED'));
      const ended = reads();
      await act(async () => {
        vi.advanceTimersByTime(3 * READINGS_MS);
      });
      expect(reads()).toBe(ended);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a job of another project is not found', async () => {
    const { client } = mockClient({
      Job: { error: new CombinedError({ graphQLErrors: [{ message: 'job not found', extensions: { code: 'NOT_FOUND' } }] }) },
    });
    page(client);
    const notFound = await screen.findByRole('region', { name: 'Not found' });
    expect(notFound).toHaveTextContent('There is no such job, or you may not see it.');
    expect(screen.queryByRole('button', { name: 'Retry' })).toBeNull();
    expect(screen.queryByText(/Something went wrong/)).toBeNull();
    expect(screen.getByRole('link', { name: 'Go to the overview' })).toHaveAttribute('href', '/');
  });
});
