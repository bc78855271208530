import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { jobDetail } from '../../test/fixtures';
import { renderWith } from '../../test/render';
import { formatDevices, formatExit, formatSeconds, JobDetailView, startIn } from './JobDetailView';

vi.mock('../../components/YamlEditor', () => ({
  YamlEditor: ({ value, label }: { value: string; label: string }) => <pre aria-label={label}>{value}</pre>,
}));

describe('JobDetailView', () => {
  it('shows tasks, replicas with node and GPUs, the event timeline and the spec as YAML', () => {
    renderWith(<JobDetailView job={jobDetail} onCancel={vi.fn()} cancelling={false} />);
    expect(screen.getByRole('heading', { name: 'train-llama' })).toBeInTheDocument();
    expect(screen.getByTestId('job-state')).toHaveTextContent('RUNNING');
    const replicas = screen.getByRole('table', { name: 'Replicas' });
    expect(within(replicas).getByText('gpu-node-a')).toBeInTheDocument();
    expect(within(replicas).getByText('GPU 0, GPU 1')).toBeInTheDocument();
    expect(within(replicas).getByText('GPU-abc (0.25 of it)')).toBeInTheDocument();
    const events = screen.getByRole('list', { name: 'Event timeline' });
    expect(within(events).getAllByRole('listitem')).toHaveLength(3);
    // Events name the replica as the table does (its index, not its id) and people by name.
    expect(within(events).getByText(/task main replica 1 —/)).toBeInTheDocument();
    expect(within(events).getByText(/· Alice$/)).toBeInTheDocument();
    expect(within(events).queryByText(/user:7/)).toBeNull();
    expect(within(events).getByText(/within guarantee/)).toBeInTheDocument();
    expect(screen.getByLabelText('Job spec (YAML)')).toHaveTextContent('project: vision');
  });

  it("shows each running replica's CPU, memory, disk and network use and the job's peaks", () => {
    renderWith(<JobDetailView job={jobDetail} onCancel={vi.fn()} cancelling={false} />);
    const replicas = screen.getByRole('table', { name: 'Replicas' });
    const running = within(replicas).getByText('gpu-node-a').closest('tr')!;
    const use = within(running).getByText('3.50 CPU · 24 GiB');
    expect(use).toHaveAttribute('title', 'disk read 120 MB/s · write 0 B/s · network in 2.5 MB/s · out 900 B/s');
    const placed = within(replicas).getByText('gpu-node-b').closest('tr')!;
    expect(within(placed).getAllByText('—').length).toBeGreaterThanOrEqual(2);
    expect(screen.getByTestId('utilization')).toHaveTextContent('GPU memory peak 40 GiB');
    expect(screen.getByTestId('resource-utilization')).toHaveTextContent('CPU mean 7.3 cores · peak 9.5 cores · memory peak 64 GiB');
  });

  it('keeps "submitted … ago" true without a reload', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      const submittedAt = new Date(Date.now() - 5_000).toISOString();
      renderWith(<JobDetailView job={{ ...jobDetail, submittedAt }} onCancel={vi.fn()} cancelling={false} />);
      expect(screen.getByText(/a few seconds ago/)).toBeInTheDocument();
      await act(async () => {
        vi.advanceTimersByTime(3 * 60_000);
      });
      expect(screen.getByText(/3 minutes ago/)).toBeInTheDocument();
    } finally {
      vi.useRealTimers();
    }
  });

  it('says a workspace is one, with its port and idle rule', () => {
    const workspace = { port: 8888, idleTimeoutSeconds: 1800, idleAction: 'STOP' as const };
    renderWith(
      <JobDetailView job={{ ...jobDetail, workloadType: 'WORKSPACE', workspace }} onCancel={vi.fn()} cancelling={false} />,
    );
    expect(screen.getByTestId('job-workspace')).toHaveTextContent('workspace · port 8888 · stopped after 30m idle');
    expect(screen.queryByTestId('job-workspace-open')).toBeNull();
  });

  it("says where a waiting job stands in its queue's line, and nothing once it runs", () => {
    const { unmount } = renderWith(<JobDetailView job={{ ...jobDetail, state: 'ADMITTED', queuePosition: 3 }} onCancel={vi.fn()} cancelling={false} />);
    expect(screen.getByTestId('job-position')).toHaveTextContent('Position 3 in vision/default');
    unmount();
    renderWith(<JobDetailView job={{ ...jobDetail, state: 'ADMITTED', queuePosition: 1 }} onCancel={vi.fn()} cancelling={false} />);
    expect(screen.getByTestId('job-position')).toHaveTextContent('Position 1 in vision/default (next in its queue)');
  });

  it('shows the estimated start and the run time expected from similar jobs', () => {
    const at = new Date(Date.now() + 14 * 60_000 + 5_000).toISOString();
    const predictedRuntime = { p50Seconds: 1800, p90Seconds: 2400, samples: 12, basis: 'same name' };
    renderWith(
      <JobDetailView
        job={{ ...jobDetail, state: 'ADMITTED', queuePosition: 3, estimatedStart: { at, jobsAhead: 5 }, predictedRuntime }}
        onCancel={vi.fn()}
        cancelling={false}
      />,
    );
    expect(screen.getByTestId('job-position')).toHaveTextContent('Position 3 in vision/default, estimated start in ~14 min');
    expect(screen.getByTestId('job-predicted-runtime')).toHaveTextContent(
      'Expected run time ~30 min (90 % of similar jobs within ~40 min; from 12 finished jobs, same name)',
    );
    expect(startIn(new Date(Date.now() - 1000).toISOString(), Date.now())).toBe('now');
  });

  it('shows no position for a running job', () => {
    renderWith(<JobDetailView job={jobDetail} onCancel={vi.fn()} cancelling={false} />);
    expect(screen.queryByTestId('job-position')).toBeNull();
  });

  it('links to a running workspace at the address its cluster reported', () => {
    const workspace = { port: 8888, idleTimeoutSeconds: 1800, idleAction: 'STOP' as const };
    const endpoint = 'http://job-7.vision.sim.invalid:8888/';
    renderWith(
      <JobDetailView
        job={{ ...jobDetail, workloadType: 'WORKSPACE', workspace, endpoint }}
        onCancel={vi.fn()}
        cancelling={false}
      />,
    );
    expect(screen.getByRole('link', { name: 'Open workspace' })).toHaveAttribute('href', endpoint);
  });

  it('asks before cancelling', async () => {
    const onCancel = vi.fn();
    const user = userEvent.setup();
    renderWith(<JobDetailView job={jobDetail} onCancel={onCancel} cancelling={false} />);
    await user.click(screen.getByRole('button', { name: 'Cancel job' }));
    await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Keep it' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(onCancel).not.toHaveBeenCalled();
    await user.click(screen.getByRole('button', { name: 'Cancel job' }));
    await user.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Cancel job' }));
    expect(onCancel).toHaveBeenCalledOnce();
  });

  it('cannot cancel a finished job; shows the empty replica state', () => {
    renderWith(
      <JobDetailView job={{ ...jobDetail, state: 'SUCCEEDED', replicas: [] }} onCancel={vi.fn()} cancelling={false} />,
    );
    expect(screen.getByRole('button', { name: 'Cancel job' })).toBeDisabled();
    expect(screen.getByText('No replicas placed yet')).toBeInTheDocument();
  });

  it('suspends a live job and resumes a suspended one', async () => {
    const user = userEvent.setup();
    const onSuspend = vi.fn();
    const onResume = vi.fn();
    const { unmount } = renderWith(
      <JobDetailView job={jobDetail} onCancel={vi.fn()} cancelling={false} onSuspend={onSuspend} onResume={onResume} />,
    );
    expect(screen.queryByRole('button', { name: 'Resume job' })).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Suspend job' }));
    expect(onSuspend).toHaveBeenCalledOnce();
    unmount();
    renderWith(
      <JobDetailView
        job={{ ...jobDetail, state: 'SUSPENDED' }}
        onCancel={vi.fn()}
        cancelling={false}
        onSuspend={onSuspend}
        onResume={onResume}
      />,
    );
    expect(screen.queryByRole('button', { name: 'Suspend job' })).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Resume job' }));
    expect(onResume).toHaveBeenCalledOnce();
    expect(screen.getByRole('button', { name: 'Cancel job' })).toBeEnabled();
  });

  it('formats durations', () => {
    expect(formatSeconds(1800)).toBe('30m');
    expect(formatSeconds(5400)).toBe('1h 30m');
    expect(formatSeconds(20)).toBe('20s');
  });

  it('says how a replica ended, with its exit code when known', () => {
    expect(formatExit(null, null)).toBe('—');
    expect(formatExit('OOM_KILLED', 137)).toBe('OOMKilled (exit 137)');
    expect(formatExit('LOST', null)).toBe('Lost');
    expect(formatExit('COMPLETED', 0)).toBe('Completed (exit 0)');
  });

  it('formats device lists', () => {
    expect(formatDevices(null)).toBe('—');
    expect(formatDevices({ a: 1 })).toBe('{"a":1}');
    expect(formatDevices([{ index: 0, milli: 1000 }, { index: 3, milli: 250 }])).toBe('GPU 0, GPU 3 (0.25 of it)');
    expect(formatDevices([{ index: 2, milli: 142, mig_start: 4 }])).toBe('GPU 2 (MIG instance from slice 4)');
  });
});
