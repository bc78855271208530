import { Card, CardContent, CardHeader, Grid, Typography } from '@mui/material';
import { BarChart } from '@mui/x-charts/BarChart';
import { DataGrid, GridToolbar, type GridColDef } from '@mui/x-data-grid';
import { useMemo } from 'react';
import { gridEnvProps } from '../../components/grid';
import { Empty } from '../../components/states';
import type { UsageQuery } from '../../gql/graphql';
import type { Dimension } from './period';
import { daySeries, DIMENSION_LABEL, groupKey } from './period';

type Report = UsageQuery['usage'];
type Row = Report['rows'][number];

/**
 * An exact decimal string to 2 decimals, rounded half up on its digits (not through a float, so
 * "0.125" reads 0.13 and a huge amount keeps its digits).
 */
export function twoDecimals(exact: string): string {
  const m = /^(-?)(\d+)(?:\.(\d*))?$/.exec(exact.trim());
  if (!m) return exact;
  const [, sign, whole, frac = ''] = m;
  const cents = BigInt(whole + (frac + '00').slice(0, 2)) + (Number(frac[2] ?? '0') >= 5 ? 1n : 0n);
  const text = cents.toString().padStart(3, '0');
  const out = `${text.slice(0, -2)}.${text.slice(-2)}`;
  return sign && cents !== 0n ? `-${out}` : out;
}

/** Totals per group (exact decimal strings from the API, shown to 2 decimals) and per-day charts
 * of cost and GPU-hours. */
export function BillingView({ byDay, totals, dim }: { byDay: Report; totals: Report; dim: Dimension }) {
  const cost = useMemo(() => daySeries(byDay.rows, dim, 'effectiveCostValue'), [byDay, dim]);
  const hours = useMemo(() => daySeries(byDay.rows, dim, 'gpuHoursValue'), [byDay, dim]);
  const label = DIMENSION_LABEL[dim];
  const columns: GridColDef<Row & { id: string }>[] = [
    { field: 'group', headerName: label, flex: 1, minWidth: 140, valueGetter: (_v, r) => groupKey(r, dim) },
    // Exact decimals come from the API (and go into FOCUS exports); people read 2 decimals.
    { field: 'gpuHours', headerName: 'GPU-hours', flex: 1, align: 'right', headerAlign: 'right', valueFormatter: (v: string) => twoDecimals(v) },
    {
      field: 'effectiveCost',
      headerName: `Cost (${totals.currency})`,
      flex: 1,
      align: 'right',
      headerAlign: 'right',
      valueFormatter: (v: string) => twoDecimals(v),
    },
    {
      field: 'listCost',
      headerName: `List cost (${totals.currency})`,
      flex: 1,
      align: 'right',
      headerAlign: 'right',
      valueFormatter: (v: string) => twoDecimals(v),
    },
    { field: 'charges', headerName: 'Charges', type: 'number', width: 90 },
  ];
  if (totals.rows.length === 0) return <Empty title="No usage in this period" />;
  return (
    <Grid container spacing={2}>
      <Grid item xs={12}>
        <DataGrid
          {...gridEnvProps}
          aria-label={`Usage by ${label.toLowerCase()}`}
          rows={totals.rows.map((r) => ({ ...r, id: groupKey(r, dim) }))}
          columns={columns}
          autoHeight
          density="compact"
          slots={{ toolbar: GridToolbar }}
          slotProps={{ toolbar: { csvOptions: { fileName: 'grus-usage' }, printOptions: { disableToolbarButton: true } } }}
          pageSizeOptions={[25, 50]}
          initialState={{ pagination: { paginationModel: { pageSize: 25 } } }}
        />
        <Typography variant="caption" color="text.secondary">
          Counted up to {new Date(totals.asOf).toISOString().replace('T', ' ').slice(0, 19)} UTC.
        </Typography>
      </Grid>
      {(
        [
          ['Cost per day', cost, totals.currency],
          ['GPU-hours per day', hours, 'GPU-hours'],
        ] as const
      ).map(([title, s, unit]) => (
        <Grid item xs={12} lg={6} key={title}>
          <Card variant="outlined">
            <CardHeader
              title={`${title} by ${label.toLowerCase()}`}
              subheader={unit}
              titleTypographyProps={{ variant: 'h6', component: 'h2' }}
            />
            <CardContent>
              <BarChart
                height={280}
                xAxis={[{ scaleType: 'band', data: s.days }]}
                series={s.series.map((x) => ({ ...x, valueFormatter: (v: number | null) => (v == null ? '—' : v.toFixed(2)) }))}
              />
            </CardContent>
          </Card>
        </Grid>
      ))}
    </Grid>
  );
}
