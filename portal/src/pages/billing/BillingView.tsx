import { gridEnvProps } from '../../components/grid';
import { Alert, Button, Card, CardContent, CardHeader, Stack, ToggleButton, ToggleButtonGroup } from '@mui/material';
import { BarChart } from '@mui/x-charts/BarChart';
import { DataGrid, GridToolbar, type GridColDef } from '@mui/x-data-grid';
import dayjs from 'dayjs';
import { useMemo, useState } from 'react';
import { Empty } from '../../components/states';
import type { ExportFormat, UsageGroupBy, UsageRow } from './types';

const GROUP_LABEL: Record<UsageGroupBy, string> = { project: 'Project', gpuModel: 'GPU model', clusterId: 'Cluster' };

/** Cost per period, one series per group: what the stacked chart draws. */
export function costSeries(rows: UsageRow[], groupBy: UsageGroupBy) {
  const periods = [...new Set(rows.map((r) => r.periodStart))].sort();
  const groups = [...new Set(rows.map((r) => r[groupBy]))].sort();
  const series = groups.map((g) => ({
    label: g,
    stack: 'cost',
    data: periods.map((p) =>
      rows.filter((r) => r.periodStart === p && r[groupBy] === g).reduce((s, r) => s + r.cost, 0),
    ),
  }));
  return { periods, series };
}

const columns: GridColDef<UsageRow & { id: number }>[] = [
  { field: 'periodStart', headerName: 'Period', width: 120, valueFormatter: (v: string) => dayjs(v).format('YYYY-MM-DD') },
  { field: 'project', headerName: 'Project', flex: 1 },
  { field: 'gpuModel', headerName: 'GPU model', flex: 1 },
  { field: 'clusterId', headerName: 'Cluster', flex: 1 },
  { field: 'gpuHours', headerName: 'GPU hours', type: 'number', width: 110, valueFormatter: (v: number) => v.toFixed(2) },
  { field: 'cost', headerName: 'Cost', type: 'number', width: 110, valueFormatter: (v: number) => v.toFixed(2) },
  { field: 'currency', headerName: 'Currency', width: 90 },
];

export function BillingView({ rows, onExport }: { rows: UsageRow[]; onExport: (f: ExportFormat) => Promise<string> }) {
  const [groupBy, setGroupBy] = useState<UsageGroupBy>('project');
  const [exportError, setExportError] = useState<string | null>(null);
  const { periods, series } = useMemo(() => costSeries(rows, groupBy), [rows, groupBy]);
  const download = async (f: ExportFormat) => {
    setExportError(null);
    try {
      window.location.assign(await onExport(f));
    } catch (e) {
      setExportError(e instanceof Error ? e.message : String(e));
    }
  };
  if (rows.length === 0) return <Empty title="No usage in this period" />;
  return (
    <Stack spacing={2}>
      <Stack direction="row" spacing={2}>
        <ToggleButtonGroup
          exclusive
          size="small"
          value={groupBy}
          onChange={(_e, v: UsageGroupBy | null) => v && setGroupBy(v)}
          aria-label="Group cost by"
        >
          {(Object.keys(GROUP_LABEL) as UsageGroupBy[]).map((g) => (
            <ToggleButton key={g} value={g}>
              {GROUP_LABEL[g]}
            </ToggleButton>
          ))}
        </ToggleButtonGroup>
        <Button variant="outlined" onClick={() => void download('FOCUS_CSV')}>
          Export FOCUS CSV
        </Button>
        <Button variant="outlined" onClick={() => void download('FOCUS_JSONL')}>
          Export FOCUS JSONL
        </Button>
      </Stack>
      {exportError && <Alert severity="error">{exportError}</Alert>}
      <Card variant="outlined">
        <CardHeader title={`Cost by ${GROUP_LABEL[groupBy].toLowerCase()}`} titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
        <CardContent>
          <BarChart
            height={300}
            xAxis={[{ scaleType: 'band', data: periods.map((p) => dayjs(p).format('MM-DD')) }]}
            series={series}
          />
        </CardContent>
      </Card>
      <DataGrid
        {...gridEnvProps}
        aria-label="Usage"
        rows={rows.map((r, i) => ({ ...r, id: i }))}
        columns={columns}
        autoHeight
        density="compact"
        slots={{ toolbar: GridToolbar }}
        slotProps={{ toolbar: { csvOptions: { fileName: 'grus-usage' }, printOptions: { disableToolbarButton: true } } }}
        pageSizeOptions={[25, 50]}
        initialState={{ pagination: { paginationModel: { pageSize: 25 } } }}
      />
    </Stack>
  );
}
