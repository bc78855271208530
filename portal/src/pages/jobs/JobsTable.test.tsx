import { screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { jobRows } from '../../test/fixtures';
import { renderWith } from '../../test/render';
import { JobsTable, viewFromParams, viewToParams } from './JobsTable';

describe('JobsTable', () => {
  it('renders rows with links, states and the toolbar (columns, filters, export)', () => {
    renderWith(
      <JobsTable
        rows={jobRows}
        loading={false}
        view={viewFromParams(new URLSearchParams())}
        onViewChange={vi.fn()}
        selection={[]}
        onSelectionChange={vi.fn()}
        canSelect={() => true}
      />,
    );
    const grid = screen.getByRole('grid');
    expect(within(grid).getByRole('link', { name: 'train-llama' })).toHaveAttribute('href', '/jobs/1');
    expect(within(grid).getByText('PENDING')).toBeInTheDocument();
    expect(within(grid).getByText('east-1')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: /columns/i })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: /export/i })).toBeInTheDocument();
    // hidden by default: the id column
    expect(within(grid).queryByRole('columnheader', { name: 'ID' })).toBeNull();
  });

  it('shows the empty state', () => {
    renderWith(
      <JobsTable
        rows={[]}
        loading={false}
        view={viewFromParams(new URLSearchParams())}
        onViewChange={vi.fn()}
        selection={[]}
        onSelectionChange={vi.fn()}
        canSelect={() => true}
      />,
    );
    expect(screen.getByText('No jobs match')).toBeInTheDocument();
  });

  it('keeps the view in the URL', () => {
    const params = new URLSearchParams('project=vision&sort=submittedAt:asc&filter=state:equals:RUNNING&q=llama&hide=id,queue');
    const view = viewFromParams(params);
    expect(view.sort).toEqual([{ field: 'submittedAt', sort: 'asc' }]);
    expect(view.filter.items[0]).toMatchObject({ field: 'state', operator: 'equals', value: 'RUNNING' });
    expect(view.filter.quickFilterValues).toEqual(['llama']);
    expect(view.hidden).toEqual({ id: false, queue: false });
    const back = viewToParams(view, params);
    expect(Object.fromEntries(back)).toEqual(Object.fromEntries(params));
  });
});
