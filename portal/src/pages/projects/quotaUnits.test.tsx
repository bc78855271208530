import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { queue } from '../../test/fixtures';
import { mockClient, renderWith } from '../../test/render';
import { QueueAdmin } from './ProjectPage';
import { fromStoredAmount, quotaUnit, toStoredAmount } from './quotaUnits';

describe('quota units', () => {
  it('reads GPUs, CPUs and GiB and stores milli and MiB', () => {
    expect(quotaUnit('gpu/A100-80GB').unit).toBe('GPUs');
    expect(toStoredAmount('8', 'gpu')).toEqual({ amount: 8000 });
    expect(toStoredAmount('0.5', 'pool/train')).toEqual({ amount: 500 });
    expect(toStoredAmount('2.5', 'cpu_milli')).toEqual({ amount: 2500 });
    expect(toStoredAmount('1.5', 'memory_mib')).toEqual({ amount: 1536 });
    expect(toStoredAmount('0.0005', 'gpu')).toEqual({ error: '0.0005 GPUs is finer than a thousandth of a GPU' });
    expect(toStoredAmount('-1', 'gpu')).toHaveProperty('error');
    expect(toStoredAmount('eight', 'gpu')).toEqual({ error: 'a number of GPUs, like 8 or 0.5' });
    expect(fromStoredAmount(32000, 'gpu')).toBe('32 GPUs');
  });

  it('the admin form takes GPUs: typing 8 sets 8 GPUs, not 0.008', async () => {
    const { client, calls } = mockClient({}, { UpdateQuota: () => ({ data: { updateQuota: queue } }) });
    const onDone = vi.fn();
    renderWith(<QueueAdmin projectId="3" queues={[queue]} onDone={onDone} />, { client });
    const user = userEvent.setup({ delay: null });
    await user.type(screen.getByLabelText('Guaranteed (GPUs)'), '0.0005');
    await user.click(screen.getByRole('button', { name: 'Set quota' }));
    expect(await screen.findByText('Guaranteed: 0.0005 GPUs is finer than a thousandth of a GPU')).toBeInTheDocument();
    expect(calls).toHaveLength(0);
    await user.clear(screen.getByLabelText('Guaranteed (GPUs)'));
    await user.type(screen.getByLabelText('Guaranteed (GPUs)'), '8');
    await user.type(screen.getByLabelText('Limit (GPUs)'), '16');
    await user.click(screen.getByRole('button', { name: 'Set quota' }));
    expect(await screen.findByText('Quota gpu set: 8 GPUs guaranteed, limit 16 GPUs')).toBeInTheDocument();
    expect(calls[0]!.variables).toMatchObject({ resource: 'gpu', guaranteed: 8000, limit: 16000 });
    expect(onDone).toHaveBeenCalled();
  });
});
