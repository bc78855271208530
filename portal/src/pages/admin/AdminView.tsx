import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  CardHeader,
  Checkbox,
  FormControlLabel,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import { DataGrid, type GridColDef } from '@mui/x-data-grid';
import { useState } from 'react';
import type { FormEvent } from 'react';
import { formatTime } from '../../components/format';
import { gridEnvProps } from '../../components/grid';
import type { ApiTokensQuery, PriceBookQuery } from '../../gql/graphql';
import { ConfirmButton } from '../../components/ConfirmButton';

/** What registerCluster / rotateAgentToken answer: shown once, never stored by the portal. */
export interface AgentToken {
  clusterId: string;
  agentToken: string;
  helmInstallCommand: string;
}

/** Resolves to an error text, or null when it worked. */
type Action<A extends unknown[]> = (...args: A) => Promise<string | null>;

function OneTimeToken({ token, onClose }: { token: AgentToken; onClose: () => void }) {
  return (
    <Alert severity="warning" sx={{ mt: 2 }} onClose={onClose} role="alert">
      <Typography variant="body2">
        Agent token of <strong>{token.clusterId}</strong>, shown this once (it is stored hashed):
      </Typography>
      <Box component="code" data-testid="agent-token" sx={{ display: 'block', my: 1, wordBreak: 'break-all' }}>
        {token.agentToken}
      </Box>
      <Typography variant="body2">Install the agent in the cluster with:</Typography>
      <Box component="pre" data-testid="helm-command" sx={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all', fontSize: 12, m: 0 }}>
        {token.helmInstallCommand}
      </Box>
    </Alert>
  );
}

export function RegisterClusterPanel({
  clusters,
  onRegister,
  onRotate,
}: {
  clusters: readonly { id: string; displayName?: string | null; health: string }[];
  onRegister: (id: string, displayName: string | null) => Promise<AgentToken | string>;
  onRotate: (id: string) => Promise<AgentToken | string>;
}) {
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [token, setToken] = useState<AgentToken | null>(null);
  const [error, setError] = useState<string | null>(null);
  const show = (r: AgentToken | string) => {
    if (typeof r === 'string') {
      setError(r);
      setToken(null);
    } else {
      setError(null);
      setToken(r);
    }
  };
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await onRegister(id.trim(), name.trim() || null);
    show(r);
    if (typeof r !== 'string') setId(''), setName('');
  };
  const columns: GridColDef<(typeof clusters)[number]>[] = [
    { field: 'id', headerName: 'Cluster', flex: 1 },
    { field: 'displayName', headerName: 'Name', flex: 1, valueFormatter: (v: string | null) => v ?? '—' },
    { field: 'health', headerName: 'Health', width: 110 },
    {
      field: 'rotate',
      headerName: 'Agent token',
      width: 140,
      sortable: false,
      renderCell: (p) => (
        <Button size="small" onClick={() => void onRotate(p.row.id).then(show)} aria-label={`Rotate the agent token of ${p.row.id}`}>
          Rotate
        </Button>
      ),
    },
  ];
  return (
    <Card variant="outlined">
      <CardHeader title="Clusters" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
      <CardContent>
        <DataGrid
          {...gridEnvProps}
          aria-label="Registered clusters"
          rows={clusters}
          columns={columns}
          autoHeight
          density="compact"
          hideFooter={clusters.length <= 25}
          localeText={{ noRowsLabel: 'No clusters registered' }}
        />
        <Stack component="form" direction="row" spacing={2} sx={{ mt: 2 }} onSubmit={(e) => void submit(e)} aria-label="Register a cluster">
          <TextField
            size="small"
            label="Cluster id"
            value={id}
            onChange={(e) => setId(e.target.value)}
            required
            helperText="lower-case letters, digits and -"
          />
          <TextField size="small" label="Display name" value={name} onChange={(e) => setName(e.target.value)} />
          <Button type="submit" variant="contained" disabled={!id.trim()} sx={{ alignSelf: 'flex-start' }}>
            Register cluster
          </Button>
        </Stack>
        {error && (
          <Alert severity="error" sx={{ mt: 2 }}>
            {error}
          </Alert>
        )}
        {token && <OneTimeToken token={token} onClose={() => setToken(null)} />}
      </CardContent>
    </Card>
  );
}

type Price = PriceBookQuery['priceBook'][number];

const priceColumns: GridColDef<Price>[] = [
  { field: 'gpuModel', headerName: 'GPU model', flex: 1 },
  { field: 'listPricePerGpuHour', headerName: 'List / GPU-hour', flex: 1, align: 'right', headerAlign: 'right' },
  { field: 'contractedPricePerGpuHour', headerName: 'Contracted / GPU-hour', flex: 1, align: 'right', headerAlign: 'right' },
  { field: 'currency', headerName: 'Currency', width: 90 },
  { field: 'effectiveFrom', headerName: 'From', width: 170, valueFormatter: (v: string) => formatTime(v) },
  { field: 'effectiveTo', headerName: 'Until', width: 170, valueFormatter: (v: string | null) => (v ? formatTime(v) : 'further notice') },
];

export interface NewPrice {
  gpuModel: string;
  list: string;
  contracted: string | null;
  currency: string | null;
  from: string;
  to: string | null;
}

const PRICE_RE = /^\d+(\.\d{1,6})?$/;
const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;

/** The form's fields as setPrice's arguments, or the first problem. Dates are UTC midnights. */
export function priceInput(f: { gpuModel: string; list: string; contracted: string; currency: string; from: string; to: string }): NewPrice | string {
  if (!f.gpuModel.trim()) return 'GPU model is required';
  if (!PRICE_RE.test(f.list.trim())) return 'List price: a decimal such as 2.50 (at most six decimals)';
  if (f.contracted.trim() && !PRICE_RE.test(f.contracted.trim())) return 'Contracted price: a decimal such as 1.90';
  if (!DATE_RE.test(f.from)) return 'Effective from: a date';
  if (f.to && !DATE_RE.test(f.to)) return 'Effective until: a date';
  if (f.to && f.to <= f.from) return 'Effective until must be after effective from';
  return {
    gpuModel: f.gpuModel.trim(),
    list: f.list.trim(),
    contracted: f.contracted.trim() || null,
    currency: f.currency.trim().toUpperCase() || null,
    from: `${f.from}T00:00:00Z`,
    to: f.to ? `${f.to}T00:00:00Z` : null,
  };
}

export function PriceBookPanel({ prices, onSetPrice }: { prices: readonly Price[]; onSetPrice?: Action<[NewPrice]> }) {
  const empty = { gpuModel: '', list: '', contracted: '', currency: '', from: '', to: '' };
  const [f, setF] = useState(empty);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const field = (k: keyof typeof empty) => ({ value: f[k], onChange: (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value }) });
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!onSetPrice) return;
    const input = priceInput(f);
    if (typeof input === 'string') return setMessage({ ok: false, text: input });
    const err = await onSetPrice(input);
    setMessage(err ? { ok: false, text: err } : { ok: true, text: `Price of ${input.gpuModel} set` });
    if (!err) setF(empty);
  };
  return (
    <Card variant="outlined">
      <CardHeader title="Price book" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
      <CardContent>
        <DataGrid
          {...gridEnvProps}
          aria-label="Price book"
          rows={prices}
          columns={priceColumns}
          autoHeight
          density="compact"
          localeText={{ noRowsLabel: 'No prices set' }}
          hideFooter={prices.length <= 25}
        />
        {onSetPrice && (
          <Stack component="form" direction="row" spacing={2} sx={{ mt: 2, flexWrap: 'wrap', rowGap: 2 }} onSubmit={(e) => void submit(e)} aria-label="Set a price">
            <TextField size="small" label="GPU model" required {...field('gpuModel')} />
            <TextField size="small" label="List price per GPU-hour" required {...field('list')} sx={{ width: 190 }} />
            <TextField size="small" label="Contracted price" {...field('contracted')} helperText="default: the list price" sx={{ width: 160 }} />
            <TextField size="small" label="Currency" {...field('currency')} helperText="default: the book's" sx={{ width: 110 }} />
            <TextField size="small" type="date" label="Effective from" required InputLabelProps={{ shrink: true }} {...field('from')} helperText="UTC" />
            <TextField size="small" type="date" label="Effective until" InputLabelProps={{ shrink: true }} {...field('to')} helperText="empty: open-ended" />
            <Button type="submit" variant="outlined" sx={{ alignSelf: 'flex-start' }}>
              Set price
            </Button>
          </Stack>
        )}
        {message && (
          <Alert severity={message.ok ? 'success' : 'error'} sx={{ mt: 2 }} onClose={() => setMessage(null)}>
            {message.text}
          </Alert>
        )}
      </CardContent>
    </Card>
  );
}

type Token = ApiTokensQuery['apiTokens'][number];

export function ApiTokensPanel({
  tokens,
  onCreate,
  onRevoke,
}: {
  tokens: readonly Token[];
  onCreate: (name: string, days: number, readOnly: boolean) => Promise<{ secret: string } | string>;
  onRevoke: Action<[string]>;
}) {
  const [name, setName] = useState('');
  const [days, setDays] = useState('90');
  const [readOnly, setReadOnly] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const validDays = /^\d+$/.test(days) && Number(days) >= 1;
  const columns: GridColDef<Token>[] = [
    { field: 'name', headerName: 'Name', flex: 1 },
    { field: 'prefix', headerName: 'Starts with', width: 130 },
    {
      field: 'scopes',
      headerName: 'May',
      width: 110,
      valueFormatter: (v: readonly string[]) => (v.includes('WRITE') ? (v.includes('READ') ? 'read, write' : 'write') : 'read only'),
    },
    { field: 'createdAt', headerName: 'Created', width: 165, valueFormatter: (v: string) => formatTime(v) },
    { field: 'expiresAt', headerName: 'Expires', width: 165, valueFormatter: (v: string | null) => formatTime(v) },
    { field: 'lastUsedAt', headerName: 'Last used', width: 165, valueFormatter: (v: string | null) => formatTime(v) },
    {
      field: 'revokedAt',
      headerName: 'Revoked',
      width: 165,
      sortable: false,
      renderCell: (p) =>
        p.row.revokedAt ? (
          formatTime(p.row.revokedAt)
        ) : (
          <ConfirmButton
            size="small"
            color="error"
            aria-label={`Revoke ${p.row.name}`}
            title={`Revoke ${p.row.name}?`}
            text="Whatever uses this token is refused from now on. This cannot be undone."
            confirmLabel="Revoke token"
            onConfirm={() => void onRevoke(p.row.id).then((err) => setError(err))}
          >
            Revoke
          </ConfirmButton>
        ),
    },
  ];
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await onCreate(name.trim(), Number(days), readOnly);
    if (typeof r === 'string') {
      setError(r);
      return;
    }
    setError(null);
    setSecret(r.secret);
    setName('');
  };
  return (
    <Card variant="outlined">
      <CardHeader title="Your API tokens" subheader="for the CLI and CI" titleTypographyProps={{ variant: 'h6', component: 'h2' }} />
      <CardContent>
        <Stack component="form" direction="row" spacing={2} sx={{ mb: 2 }} aria-label="Create an API token" onSubmit={(e) => void submit(e)}>
          <TextField size="small" label="Token name" value={name} onChange={(e) => setName(e.target.value)} required />
          <TextField
            size="small"
            label="Expires in days"
            value={days}
            onChange={(e) => setDays(e.target.value)}
            error={!validDays}
            sx={{ width: 140 }}
          />
          <FormControlLabel
            control={<Checkbox size="small" checked={readOnly} onChange={(e) => setReadOnly(e.target.checked)} />}
            label="Read only"
          />
          <Button type="submit" variant="outlined" disabled={!name.trim() || !validDays} sx={{ alignSelf: 'flex-start' }}>
            Create token
          </Button>
        </Stack>
        {secret && (
          <Alert severity="warning" sx={{ mb: 2 }} onClose={() => setSecret(null)}>
            Copy the token now, it is shown once: <code data-testid="token-secret">{secret}</code>
          </Alert>
        )}
        {error && (
          <Alert severity="error" sx={{ mb: 2 }} onClose={() => setError(null)}>
            {error}
          </Alert>
        )}
        <DataGrid
          {...gridEnvProps}
          aria-label="API tokens"
          rows={tokens}
          columns={columns}
          autoHeight
          density="compact"
          localeText={{ noRowsLabel: 'No API tokens' }}
          hideFooter={tokens.length <= 25}
        />
      </CardContent>
    </Card>
  );
}
