import { screen } from '@testing-library/react';
import { CombinedError } from 'urql';
import { describe, expect, it } from 'vitest';
import { mockClient, renderWith } from '../test/render';
import { costText, JobCost, ServiceCost } from './WorkloadCost';

const cost = { __typename: 'WorkloadCost', currency: 'USD', effectiveCostValue: 13.76, gpuHoursValue: 4 };

describe('Workload cost', () => {
  it('shows what a job has cost so far, in currency and GPU-hours', async () => {
    const { client } = mockClient({ JobCost: { data: { job: { __typename: 'Job', id: '7', cost } } } });
    renderWith(<JobCost id="7" changedAt="2026-01-01T00:00:00Z" />, { client });
    expect(await screen.findByText('Cost so far: 13.76 USD · 4.00 GPU-hours')).toBeInTheDocument();
    expect(costText({ currency: 'EUR', effectiveCostValue: 0.004, gpuHoursValue: 0.5 })).toBe('< 0.01 EUR · 0.50 GPU-hours');
    expect(costText({ currency: 'EUR', effectiveCostValue: 0, gpuHoursValue: 0.006 })).toBe('0.00 EUR · 0.01 GPU-hours');
  });

  it('says why a cost is unknown (a model without a price) instead of failing the page', async () => {
    const error = new CombinedError({
      graphQLErrors: [{ message: 'no price for GPU model H100 at 2026-03-02T00:00:00Z: add one with setPrice' }],
    });
    const { client } = mockClient({ ServiceCost: { data: { service: { __typename: 'Service', id: '1', cost: null } }, error } });
    renderWith(<ServiceCost project="vision" name="chat" changedAt="2026-01-01T00:00:00Z" />, { client });
    expect(await screen.findByTestId('workload-cost')).toHaveTextContent('Cost so far: unknown (no price for GPU model H100');
  });
});
