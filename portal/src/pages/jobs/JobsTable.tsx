import { gridEnvProps } from '../../components/grid';
import { Chip, Link } from '@mui/material';
import {
  DataGrid,
  GridToolbar,
  type GridColDef,
  type GridColumnVisibilityModel,
  type GridFilterModel,
  type GridRowSelectionModel,
  type GridSortModel,
} from '@mui/x-data-grid';
import { Link as RouterLink } from 'react-router-dom';
import { formatTime, stateColor } from '../../components/format';
import type { JobState } from '../../gql/graphql';

export interface JobRow {
  id: string;
  name: string;
  state: JobState;
  queue: string;
  priorityClass: string;
  priority: number;
  preemptible: boolean;
  borrowed: boolean;
  submittedBy: string;
  submittedAt: string;
  updatedAt: string;
  clusterId: string | null;
  tasks: number;
  replicas: number;
}

/** The table's view, as kept in the URL. */
export interface GridView {
  sort: GridSortModel;
  filter: GridFilterModel;
  hidden: GridColumnVisibilityModel;
}

const columns: GridColDef<JobRow>[] = [
  {
    field: 'name',
    headerName: 'Name',
    flex: 1,
    minWidth: 160,
    renderCell: (p) => (
      <Link component={RouterLink} to={`/jobs/${p.row.id}`}>
        {p.row.name}
      </Link>
    ),
  },
  { field: 'id', headerName: 'ID', width: 80 },
  {
    field: 'state',
    headerName: 'State',
    width: 130,
    renderCell: (p) => <Chip size="small" label={p.row.state} color={stateColor(p.row.state)} />,
  },
  { field: 'queue', headerName: 'Queue', width: 110 },
  { field: 'priorityClass', headerName: 'Priority', width: 100 },
  { field: 'priority', headerName: 'Priority value', type: 'number', width: 110 },
  { field: 'submittedBy', headerName: 'User', width: 100 },
  { field: 'clusterId', headerName: 'Cluster', width: 110, valueGetter: (_v, row) => row.clusterId ?? '' },
  { field: 'tasks', headerName: 'Tasks', type: 'number', width: 80 },
  { field: 'replicas', headerName: 'Replicas', type: 'number', width: 90 },
  { field: 'preemptible', headerName: 'Preemptible', type: 'boolean', width: 110 },
  { field: 'borrowed', headerName: 'Borrowed', type: 'boolean', width: 100 },
  {
    field: 'submittedAt',
    headerName: 'Submitted',
    width: 170,
    valueFormatter: (v: string) => formatTime(v),
  },
  { field: 'updatedAt', headerName: 'Updated', width: 170, valueFormatter: (v: string) => formatTime(v) },
];

export interface JobsTableProps {
  rows: JobRow[];
  loading: boolean;
  view: GridView;
  onViewChange: (view: GridView) => void;
  selection: GridRowSelectionModel;
  onSelectionChange: (s: GridRowSelectionModel) => void;
  /** Rows that can be cancelled are selectable. */
  canSelect: (row: JobRow) => boolean;
}

export function JobsTable({ rows, loading, view, onViewChange, selection, onSelectionChange, canSelect }: JobsTableProps) {
  return (
    <DataGrid
      {...gridEnvProps}
      aria-label="Jobs"
      rows={rows}
      columns={columns}
      loading={loading}
      checkboxSelection
      disableRowSelectionOnClick
      isRowSelectable={(p) => canSelect(p.row as JobRow)}
      rowSelectionModel={selection}
      onRowSelectionModelChange={onSelectionChange}
      sortModel={view.sort}
      onSortModelChange={(sort) => onViewChange({ ...view, sort })}
      filterModel={view.filter}
      onFilterModelChange={(filter) => onViewChange({ ...view, filter })}
      columnVisibilityModel={view.hidden}
      onColumnVisibilityModelChange={(hidden) => onViewChange({ ...view, hidden })}
      slots={{ toolbar: GridToolbar }}
      slotProps={{
        toolbar: { showQuickFilter: true, csvOptions: { fileName: 'grus-jobs' }, printOptions: { disableToolbarButton: true } },
      }}
      pageSizeOptions={[25, 50, 100]}
      initialState={{ pagination: { paginationModel: { pageSize: 25 } } }}
      autoHeight
      density="compact"
      localeText={{ noRowsLabel: 'No jobs match' }}
    />
  );
}

// ---------------------------------------------------------------------------------------
// The view in the URL: sort=field:dir, filter=field:operator:value, q=quick filter, hide=a,b
// ---------------------------------------------------------------------------------------

export function viewFromParams(params: URLSearchParams): GridView {
  const s = params.get('sort');
  const [field, dir] = (s ?? '').split(':');
  const sort: GridSortModel = field ? [{ field, sort: dir === 'asc' ? 'asc' : 'desc' }] : [];
  const filter: GridFilterModel = { items: [] };
  const f = params.get('filter');
  if (f) {
    const [field, operator, ...rest] = f.split(':');
    if (field && operator) filter.items.push({ id: 1, field, operator, value: rest.join(':') || undefined });
  }
  const q = params.get('q');
  if (q) filter.quickFilterValues = q.split(' ').filter(Boolean);
  const hidden: GridColumnVisibilityModel = {};
  for (const c of (params.get('hide') ?? 'id,priority,updatedAt,replicas').split(',')) if (c) hidden[c] = false;
  return { sort, filter, hidden };
}

export function viewToParams(view: GridView, params: URLSearchParams): URLSearchParams {
  const next = new URLSearchParams(params);
  const set = (k: string, v: string | null) => (v ? next.set(k, v) : next.delete(k));
  const s = view.sort[0];
  set('sort', s && s.sort ? `${s.field}:${s.sort}` : null);
  const item = view.filter.items[0];
  set(
    'filter',
    item && item.field && item.operator
      ? `${item.field}:${item.operator}:${item.value == null ? '' : String(item.value)}`
      : null,
  );
  set('q', (view.filter.quickFilterValues ?? []).join(' ') || null);
  const hide = Object.entries(view.hidden)
    .filter(([, v]) => v === false)
    .map(([k]) => k)
    .join(',');
  next.set('hide', hide);
  return next;
}
