import { render, screen } from '@testing-library/react';
import { MemoryRouter } from 'react-router-dom';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import type { BudgetFieldsFragment } from '../gql/graphql';
import { renderWith } from '../test/render';
import { budgetAmount, BudgetCard, readBudgetForm } from './BudgetCard';

export const budget: BudgetFieldsFragment = {
  __typename: 'Budget',
  unit: 'CURRENCY',
  unitLabel: 'USD',
  amount: '1500.000000',
  amountValue: 1500,
  softPercent: 80,
  hard: true,
  suspendBorrowed: false,
  periodStart: '2026-11-01T00:00:00Z',
  periodEnd: '2026-12-01T00:00:00Z',
  spentValue: 1100.123456789,
  committedValue: 120.5,
  status: 'WARNING',
  burnDown: [
    { __typename: 'BudgetDay', day: '2026-11-01T00:00:00Z', spent: 400 },
    { __typename: 'BudgetDay', day: '2026-11-02T00:00:00Z', spent: 1100.123456789 },
  ],
  updatedAt: '2026-11-01T08:00:00Z',
};

describe('BudgetCard', () => {
  it('shows where the month stands in the unit with two decimals, and the burn-down', () => {
    renderWith(<BudgetCard title="Monthly budget" budget={budget} />);
    expect(screen.getByText('1,100.12 USD spent, 120.50 USD committed by running work, of 1,500.00 USD.')).toBeInTheDocument();
    expect(screen.getByTestId('budget-status')).toHaveTextContent('81 % · past its warning threshold');
    expect(screen.getByRole('img', { name: 'Budget burn-down: spending this month by day' })).toBeInTheDocument();
    // Without onSave (a member), no form.
    expect(screen.queryByRole('form', { name: 'Set the budget' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Save budget' })).toBeNull();
  });

  it('keeps a half-typed amount when a refetch changes only the spending; a new stored setting resets it', async () => {
    const user = userEvent.setup({ delay: null });
    const onSave = vi.fn(async () => null);
    const card = (b: BudgetFieldsFragment) => (
      <MemoryRouter>
        <BudgetCard title="Monthly budget" budget={b} onSave={onSave} />
      </MemoryRouter>
    );
    const { rerender } = render(card(budget));
    const amount = () => screen.getByLabelText('Amount a month') as HTMLInputElement;
    expect(amount().value).toBe('1500');
    await user.clear(amount());
    await user.type(amount(), '2000');
    const spentMore = { ...budget, spentValue: 1200, burnDown: [...budget.burnDown, { __typename: 'BudgetDay' as const, day: '2026-11-03T00:00:00Z', spent: 1200 }] };
    rerender(card(spentMore));
    expect(amount().value).toBe('2000');
    expect(screen.getByText(/1,200.00 USD spent/)).toBeInTheDocument();
    rerender(card({ ...spentMore, amount: '3000.000000', amountValue: 3000 }));
    expect(amount().value).toBe('3000');
  });

  it('checks the amount and the warning percentage before it sends them', async () => {
    expect(readBudgetForm('ten', '80')).toEqual({ error: 'The amount is a positive number, e.g. 1500 or 250.5' });
    expect(readBudgetForm('0', '80')).toHaveProperty('error');
    expect(readBudgetForm('250.5', '0')).toEqual({ error: 'Warn at a whole percentage from 1 to 100' });
    expect(readBudgetForm(' 250.5 ', '90')).toEqual({ amount: '250.5', softPercent: 90 });
    expect(budgetAmount(12.345, 'GPU-hours')).toBe('12.35 GPU-hours');

    const onSave = vi.fn(async () => null);
    const user = userEvent.setup({ delay: null });
    renderWith(<BudgetCard title="Monthly budget" budget={null} onSave={onSave} />);
    expect(screen.getByText('No monthly budget set.')).toBeInTheDocument();
    await user.type(screen.getByLabelText('Amount a month'), 'lots');
    await user.click(screen.getByRole('button', { name: 'Save budget' }));
    expect(await screen.findByText('The amount is a positive number, e.g. 1500 or 250.5')).toBeInTheDocument();
    expect(onSave).not.toHaveBeenCalled();
    await user.clear(screen.getByLabelText('Amount a month'));
    await user.type(screen.getByLabelText('Amount a month'), '200');
    await user.click(screen.getByRole('button', { name: 'Save budget' }));
    expect(onSave).toHaveBeenCalledWith({ unit: 'CURRENCY', amount: '200', softPercent: 80, hard: true, suspendBorrowed: false });
    await user.click(screen.getByLabelText('and suspend borrowed work'));
    await user.click(screen.getByRole('button', { name: 'Save budget' }));
    expect(onSave).toHaveBeenLastCalledWith({ unit: 'CURRENCY', amount: '200', softPercent: 80, hard: true, suspendBorrowed: true });
    expect(await screen.findByText('Budget saved')).toBeInTheDocument();
  });
});
