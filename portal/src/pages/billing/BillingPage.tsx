import {
  Alert,
  Button,
  MenuItem,
  Stack,
  TextField,
  ToggleButton,
  ToggleButtonGroup,
  Typography,
} from '@mui/material';
import { useState } from 'react';
import { useMutation, useQuery } from 'urql';
import { ExportUsageMutation, MeQuery, TenantsQuery, UsageQuery } from '../../api/operations';
import { useSession } from '../../auth/context';
import { sessionHeaders } from '../../auth/session';
import { errorText, ErrorState, Loading } from '../../components/states';
import type { ExportFormat } from '../../gql/graphql';
import { BillingView } from './BillingView';
import type { Dimension } from './period';
import { currentMonth, DIMENSION_LABEL, exportedPeriod, exportPeriod, fileName, MONTH_RE } from './period';

/** Fetches an export with the session's credentials and hands it to the browser as a file. */
async function download(url: string, headers: Record<string, string>, fallback: string): Promise<string> {
  const res = await fetch(url, { credentials: 'same-origin', headers });
  if (!res.ok) throw new Error(`download failed: HTTP ${res.status}`);
  const name = fileName(res.headers.get('content-disposition'), fallback);
  const href = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  // The click has started the download; the object URL can go once it has been read.
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
  return name;
}

type UsageVariables = { period?: { month?: string | null } | null; groupBy?: string | readonly string[] | null } | undefined;

/**
 * The grouping and month two usage answers (per day, and totals) were both asked for; null when
 * they were asked for different ones (one of them still answers an earlier choice).
 */
export function answeredFor(byDay: UsageVariables, totals: UsageVariables): { dim: Dimension; month: string } | null {
  const dimOf = (v: UsageVariables) => [v?.groupBy ?? []].flat().filter((g) => g !== 'DAY')[0] as Dimension | undefined;
  const monthOf = (v: UsageVariables) => v?.period?.month ?? undefined;
  const dim = dimOf(totals);
  const month = monthOf(totals);
  if (!dim || !month || dimOf(byDay) !== dim || monthOf(byDay) !== month) return null;
  return { dim, month };
}

/** The export scope "every tenant" (platform admins): exportUsage without tenantId. */
const ALL = 'all';

export function BillingPage() {
  const { session } = useSession();
  const [month, setMonth] = useState(() => currentMonth(new Date()));
  const [dim, setDim] = useState<Dimension>('PROJECT');
  const [scope, setScope] = useState<string | null>(null);
  const [exported, setExported] = useState<{ ok: boolean; text: string } | null>(null);
  const valid = MONTH_RE.test(month);
  const period = { month };
  const [byDay, refetchByDay] = useQuery({ query: UsageQuery, variables: { period, groupBy: ['DAY', dim] }, pause: !valid });
  const [totals, refetchTotals] = useQuery({ query: UsageQuery, variables: { period, groupBy: [dim] }, pause: !valid });
  const [me] = useQuery({ query: MeQuery });
  const [tenants] = useQuery({ query: TenantsQuery });
  const [exporting, exportUsage] = useMutation(ExportUsageMutation);
  const admin = !!me.data?.me.platformAdmin;
  // Usage is exported by tenant admins (their tenants) and platform admins (any, or all).
  const tenantList = (tenants.data?.tenants ?? []).filter((t) => t.myRole != null);
  const canExport = admin || tenantList.length > 0;
  // Platform admins export every tenant by default; others their (first) tenant.
  const tenantId = scope ?? (admin ? ALL : (tenantList[0]?.id ?? ''));
  const refetch = () => {
    refetchByDay({ requestPolicy: 'network-only' });
    refetchTotals({ requestPolicy: 'network-only' });
  };

  const runExport = async (format: ExportFormat) => {
    setExported(null);
    const r = await exportUsage({ period: exportPeriod(month), format, tenantId: tenantId === ALL || !tenantId ? null : tenantId });
    if (r.error || !r.data) return setExported({ ok: false, text: r.error ? errorText(r.error) : 'no answer' });
    const e = r.data.exportUsage;
    try {
      const ext = format === 'FOCUS_CSV' ? 'csv' : 'jsonl';
      const name = await download(e.downloadUrl, sessionHeaders(session), `grus-focus-${month}.${ext}`);
      setExported({
        ok: true,
        text: `Downloaded ${name} (${exportedPeriod(month, e.periodEnd)}): ${e.rows} charge rows, ${e.bytes} bytes (SHA-256 ${e.sha256.slice(0, 12)}…)`,
      });
    } catch (err) {
      setExported({ ok: false, text: err instanceof Error ? err.message : String(err) });
    }
  };

  const error = byDay.error ?? totals.error;
  // While a new grouping or month loads, urql still holds the previous answers: show them only
  // as what they are (the grouping they were asked for), never mixed with the new grouping.
  const shown = answeredFor(byDay.operation?.variables, totals.operation?.variables);
  const current = shown != null && shown.dim === dim && shown.month === month;
  return (
    <>
      <Typography variant="h5" component="h1" sx={{ mb: 2 }}>
        Billing
      </Typography>
      <Stack direction="row" spacing={2} sx={{ mb: 2, flexWrap: 'wrap', rowGap: 2 }} alignItems="center">
        <TextField
          size="small"
          type="month"
          label="Month"
          value={month}
          onChange={(e) => setMonth(e.target.value)}
          error={!valid}
          helperText={valid ? 'UTC' : 'YYYY-MM'}
          InputLabelProps={{ shrink: true }}
        />
        <ToggleButtonGroup exclusive size="small" value={dim} onChange={(_e, v: Dimension | null) => v && setDim(v)} aria-label="Group by">
          {(Object.keys(DIMENSION_LABEL) as Dimension[]).map((d) => (
            <ToggleButton key={d} value={d}>
              {DIMENSION_LABEL[d]}
            </ToggleButton>
          ))}
        </ToggleButtonGroup>
        {canExport && (
          <>
        <TextField
          size="small"
          select
          label="Export scope"
          value={tenantId}
          onChange={(e) => setScope(e.target.value)}
          sx={{ minWidth: 180 }}
          helperText="the tenants you administer"
        >
          {admin && <MenuItem value={ALL}>All tenants</MenuItem>}
          {tenantList.map((t) => (
            <MenuItem key={t.id} value={t.id}>
              {t.name} ({t.slug})
            </MenuItem>
          ))}
        </TextField>
        <Button variant="outlined" disabled={!valid || exporting.fetching} onClick={() => void runExport('FOCUS_CSV')}>
          Download FOCUS CSV
        </Button>
        <Button variant="outlined" disabled={!valid || exporting.fetching} onClick={() => void runExport('FOCUS_JSONL')}>
          Download FOCUS JSONL
        </Button>
          </>
        )}
      </Stack>
      {exported && (
        <Alert severity={exported.ok ? 'success' : 'error'} sx={{ mb: 2 }} onClose={() => setExported(null)}>
          {exported.text}
        </Alert>
      )}
      {!valid ? null : byDay.data && totals.data && shown ? (
        <>
          {!current && <Loading label={`Loading usage by ${DIMENSION_LABEL[dim].toLowerCase()}`} />}
          <BillingView byDay={byDay.data.usage} totals={totals.data.usage} dim={shown.dim} />
        </>
      ) : error ? (
        <ErrorState error={error} onRetry={refetch} />
      ) : (
        <Loading label="Loading usage" />
      )}
    </>
  );
}
