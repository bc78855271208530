// Billing periods: the month the page shows and the period an export covers (pure).
import dayjs from 'dayjs';
import utc from 'dayjs/plugin/utc';
import type { PeriodInput, UsageDimension, UsageRow } from '../../gql/graphql';

dayjs.extend(utc);

export const MONTH_RE = /^\d{4}-(0[1-9]|1[0-2])$/;

/** The UTC month of `now`, `YYYY-MM`. */
export const currentMonth = (now: Date) => dayjs.utc(now).format('YYYY-MM');

/**
 * The period an export of `month` asks for: the month to date by the server's clock (up to its
 * now, whole seconds; an ended month whole). The browser's clock is not asked: one that runs
 * ahead names a cut-off the server has not reached and the export is refused. The export's
 * `periodEnd` says where the server cut (`grus usage --cutoff` with it gives the same file).
 */
export function exportPeriod(month: string): PeriodInput {
  return { month, toDate: true };
}

/** How an export's period reads: the month, or the month up to its cut-off. */
export function exportedPeriod(month: string, periodEnd: string): string {
  const end = dayjs.utc(`${month}-01`).add(1, 'month');
  const cut = dayjs.utc(periodEnd);
  return cut.isBefore(end) ? `${month} up to ${cut.format('YYYY-MM-DD HH:mm:ss')} UTC` : month;
}

export type Dimension = Extract<UsageDimension, 'PROJECT' | 'GPU_MODEL' | 'CLUSTER'>;

export const DIMENSION_LABEL: Record<Dimension, string> = { PROJECT: 'Project', GPU_MODEL: 'GPU model', CLUSTER: 'Cluster' };

type Row = Pick<UsageRow, 'project' | 'gpuModel' | 'cluster' | 'day' | 'effectiveCostValue' | 'gpuHoursValue'>;

/** The key of a row in `dim`. */
export function groupKey(row: Row, dim: Dimension): string {
  const v = dim === 'PROJECT' ? row.project : dim === 'GPU_MODEL' ? row.gpuModel : row.cluster;
  return v ?? '—';
}

/** Per day, one series per group: what the stacked charts draw (cost and GPU-hours). */
export function daySeries(rows: readonly Row[], dim: Dimension, value: 'effectiveCostValue' | 'gpuHoursValue') {
  const days = [...new Set(rows.map((r) => r.day ?? ''))].sort();
  const groups = [...new Set(rows.map((r) => groupKey(r, dim)))].sort();
  const series = groups.map((g) => ({
    id: g,
    label: g,
    stack: 'total',
    data: days.map((d) =>
      rows.filter((r) => (r.day ?? '') === d && groupKey(r, dim) === g).reduce((s, r) => s + r[value], 0),
    ),
  }));
  return { days, series };
}

/** The file name an export is saved as: the server's Content-Disposition, else a default. */
export function fileName(contentDisposition: string | null, fallback: string): string {
  const m = contentDisposition?.match(/filename="?([^";]+)"?/);
  return m?.[1] ?? fallback;
}
