import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { makeSubject } from 'wonka';
import { mockClient, renderWith } from '../../test/render';
import type { LogLine } from './LogViewer';
import { accumulate, lineText, LogViewer, matching, sourceNote } from './LogViewer';

const lines: LogLine[] = [
  { at: '2026-11-27T10:00:00Z', stream: 'STDOUT', text: '[sim] started: python train.py' },
  { at: '2026-11-27T10:00:05Z', stream: 'STDOUT', text: 'step 1: python train.py loss=2.3850' },
  { at: '2026-11-27T10:00:06Z', stream: 'STDERR', text: 'error: simulated failure' },
];

const page = (source: string, truncated = false) => ({
  data: {
    jobLogs: { __typename: 'LogPage', task: 'main', replica: 0, clusterId: 'east', source, truncated, ended: true, cursor: null, lines },
  },
});

describe('Log viewer', () => {
  it('formats, searches and explains the lines', () => {
    expect(lineText(lines[2]!)).toBe('10:00:06 [stderr] error: simulated failure');
    expect(lineText(lines[0]!, false)).toBe('[sim] started: python train.py');
    expect(matching(lines, 'LOSS').map((l) => l.text)).toEqual(['step 1: python train.py loss=2.3850']);
    expect(matching(lines, ' ')).toHaveLength(3);
    expect(sourceNote('LIVE', false)).toBeNull();
    expect(sourceNote('KEPT', true)).toBe('The replica is gone: these are the last lines its agent kept. Older lines are left out (the last 500 are shown).');
  });

  it('adds followed pages once each, even when the subscription sends its tail again', () => {
    const page = (ls: LogLine[]) => ({ followJobLogs: { lines: ls } });
    const first = accumulate(undefined, page(lines.slice(0, 2)));
    const next = accumulate(first, page(lines.slice(2)));
    expect(next).toEqual(lines);
    expect(accumulate(next, page(lines))).toEqual(lines);
    expect(accumulate(next, page([]))).toEqual(lines);
  });

  it('follows a job that has not ended yet (waiting to start) until its lines come', async () => {
    const pages = makeSubject<unknown>();
    const { client } = mockClient({}, {}, { FollowJobLogs: pages.source });
    renderWith(<LogViewer jobId="7" tasks={[{ name: 'main', replicaCount: 1 }]} live changedAt="2026-11-27T10:00:00Z" />, { client });
    expect(await screen.findByText('Waiting for output…')).toBeInTheDocument();
    const followed = (ls: LogLine[]) => ({
      followJobLogs: { __typename: 'LogPage', source: 'LIVE', truncated: false, ended: false, lines: ls },
    });
    pages.next(followed(lines.slice(0, 1)));
    pages.next(followed(lines.slice(1)));
    const box = screen.getByLabelText('Log lines');
    expect(await within(box).findByText('10:00:06 [stderr] error: simulated failure')).toBeInTheDocument();
    expect(within(box).getAllByText(/started|step|error/)).toHaveLength(3);
  });

  it("shows a finished replica's last lines, filters them, and asks for another replica", async () => {
    const { client, executed } = mockClient({ JobLogs: page('KEPT') });
    const user = userEvent.setup({ delay: null });
    renderWith(<LogViewer jobId="7" tasks={[{ name: 'main', replicaCount: 2 }]} live={false} changedAt="2026-11-27T10:00:06Z" />, { client });
    const box = await screen.findByLabelText('Log lines');
    expect(within(box).getByText('10:00:05 step 1: python train.py loss=2.3850')).toBeInTheDocument();
    expect(screen.getByText(/these are the last lines its agent kept/)).toBeInTheDocument();
    await user.type(screen.getByLabelText('Search'), 'error');
    expect(within(box).queryByText(/step 1/)).toBeNull();
    expect(screen.getByText('1 of 3 lines match')).toBeInTheDocument();
    await user.click(screen.getByLabelText('Replica'));
    await user.click(await screen.findByRole('option', { name: '1' }));
    expect(executed.some((q) => q.name === 'JobLogs' && (q.variables as { replica: number }).replica === 1)).toBe(true);
  });
});
