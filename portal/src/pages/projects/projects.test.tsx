import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { queue } from '../../test/fixtures';
import { renderWith } from '../../test/render';
import { MembersPanel } from './MembersPanel';
import { QueueCard } from './QueueCard';

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
