import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { queue } from '../../test/fixtures';
import { formatDuration } from '../../jobs/humantime';
import { mockClient, renderWith } from '../../test/render';
import { ClassOfServiceForm } from './ClassOfServiceForm';
import { MembersPanel } from './MembersPanel';
import { classOfService, fairShareText, QueueCard, reserveText, weightText } from './QueueCard';

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

  it('lists members; admins add one', async () => {
    const onAdd = vi.fn(async () => null);
    const members = [
      { __typename: 'Member' as const, role: 'MEMBER' as const, user: { __typename: 'User' as const, id: '1', subject: 'dev:bob', displayName: 'bob', email: null } },
    ];
    const { unmount } = renderWith(<MembersPanel members={members} canManage={false} onAdd={onAdd} />);
    expect(within(screen.getByRole('grid')).getByText('dev:bob')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Add member' })).toBeNull();
    unmount();
    const user = userEvent.setup({ delay: null });
    renderWith(<MembersPanel members={[]} canManage onAdd={onAdd} />);
    expect(screen.getByText('No members')).toBeInTheDocument();
    await user.type(screen.getByLabelText('User subject'), 'dev:carol');
    await user.click(screen.getByRole('button', { name: 'Add member' }));
    expect(onAdd).toHaveBeenCalledWith('dev:carol', 'MEMBER');
    expect(await screen.findByText('Added dev:carol as member')).toBeInTheDocument();
  });
});

describe('Class of service', () => {
  it('is shown on the queue card in durations', () => {
    renderWith(<QueueCard queue={queue} />);
    expect(
      screen.getByText('weight 2 · holds 10 of its fair share of 12 GPU · priority raised after 2h waiting · at most 1d · borrowed work paused 09:00-18:00 UTC'),
    ).toBeInTheDocument();
    expect(classOfService({ maxWaitSeconds: null, defaultRuntimeSeconds: 5400, maxRuntimeSeconds: null, suspendBorrowedDuring: null })).toBe(
      'runtime 1h 30m unless set',
    );
    expect(formatDuration(90061)).toBe('1d 1h 1m 1s');
    expect(fairShareText({ fairGpus: 0, heldGpus: 0 })).toBe('no GPU work held or waiting');
    expect(fairShareText({ fairGpus: 4.5, heldGpus: 6 })).toBe('holds 6 of its fair share of 4.5 GPU');
    const pools = [{ __typename: 'PoolWeight' as const, pool: 'train', weight: 3 }];
    expect(weightText({ weight: 1, poolWeights: pools })).toBe('weight 1 (pool train: 3)');
    const gpuQuota = (guaranteed: number) => [{ __typename: 'Quota' as const, resource: 'gpu', guaranteed, limit: null }];
    const held = [{ __typename: 'ResourceAmount' as const, resource: 'interactive', amount: 1000 }];
    expect(reserveText({ interactiveReserveGpus: 2, quotas: gpuQuota(8000), usage: held })).toBe('2 GPUs kept for workspaces (they hold 1)');
    expect(reserveText({ interactiveReserveGpus: 2, quotas: gpuQuota(1000), usage: [] })).toBe(
      '2 GPUs kept for workspaces (they hold 0), but only its guarantee of 1 GPU can be kept',
    );
    expect(reserveText({ interactiveReserveGpus: 0, quotas: [], usage: [] })).toBeNull();
  });

  it("shows a queue's interactive reserve in words, not as a quota bar of its own", () => {
    const usage = [...queue.usage, { __typename: 'ResourceAmount' as const, resource: 'interactive', amount: 1000 }];
    renderWith(<QueueCard queue={{ ...queue, interactiveReserveGpus: 1, usage }} />);
    expect(screen.getByText(/1 GPU kept for workspaces \(they hold 1\)/)).toBeInTheDocument();
    expect(screen.queryByText('interactive')).toBeNull();
  });

  it('admins set it as durations; a bad one is named and nothing is sent', async () => {
    const { client, calls } = mockClient({}, { UpdateQueue: () => ({ data: { updateQueue: queue } }) });
    const onDone = vi.fn();
    const user = userEvent.setup({ delay: null });
    renderWith(<ClassOfServiceForm queues={[queue]} onDone={onDone} />, { client });
    const wait = screen.getByLabelText('Max wait');
    expect(wait).toHaveValue('2h');
    expect(screen.getByLabelText('Max runtime')).toHaveValue('1d');
    await user.clear(wait);
    await user.type(wait, 'soon');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(screen.getByText('a duration like 90m, 2h or 1d')).toBeInTheDocument();
    expect(calls).toEqual([]);
    await user.clear(wait);
    await user.type(wait, '30m');
    await user.clear(screen.getByLabelText('Max runtime'));
    await user.type(screen.getByLabelText('Default runtime'), '4h');
    const pause = screen.getByLabelText('Pause borrowed work');
    expect(pause).toHaveValue('09:00-18:00');
    await user.clear(pause);
    await user.type(pause, '9-18');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(calls).toEqual([]);
    await user.clear(pause);
    await user.type(pause, '22:00-06:00');
    const pools = screen.getByLabelText('Weight per node pool');
    await user.type(pools, 'Train=3');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(screen.getByText('POOL=WEIGHT, comma-separated (train=3)')).toBeInTheDocument();
    expect(calls).toEqual([]);
    await user.clear(pools);
    await user.type(pools, 'train=3, infer=0.5');
    const reserve = screen.getByLabelText('GPUs kept for workspaces');
    expect(reserve).toHaveValue('0');
    await user.clear(reserve);
    await user.type(reserve, '0.0001');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(screen.getByText('a number of GPUs, like 2 or 0.5')).toBeInTheDocument();
    expect(calls).toEqual([]);
    await user.clear(reserve);
    await user.type(reserve, '1.5');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    expect(calls).toEqual([
      {
        name: 'UpdateQueue',
        variables: {
          queueId: '4',
          maxWaitSeconds: 1800,
          defaultRuntimeSeconds: 14400,
          maxRuntimeSeconds: null,
          suspendBorrowedDuring: '22:00-06:00',
          poolWeights: [
            { pool: 'train', weight: 3 },
            { pool: 'infer', weight: 0.5 },
          ],
          interactiveReserveGpus: 1.5,
        },
      },
    ]);
    expect(onDone).toHaveBeenCalledWith({ ok: true, text: 'Class of service of default saved' });
  });
});
