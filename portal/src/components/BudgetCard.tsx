import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  CardHeader,
  Chip,
  FormControlLabel,
  LinearProgress,
  MenuItem,
  Stack,
  Switch,
  TextField,
  Typography,
} from '@mui/material';
import { LineChart } from '@mui/x-charts/LineChart';
import dayjs from 'dayjs';
import { useEffect, useState } from 'react';
import type { FormEvent } from 'react';
import type { BudgetFieldsFragment, BudgetUnit } from '../gql/graphql';
import { ConfirmButton } from './ConfirmButton';

/** An amount in the budget's unit, as people read it: two decimals, then the unit. */
export function budgetAmount(value: number, unitLabel: string): string {
  return `${value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} ${unitLabel}`;
}

const STATUS_COLOR = { UNDER: 'success', WARNING: 'warning', EXCEEDED: 'error' } as const;
const STATUS_LABEL = { UNDER: 'within budget', WARNING: 'past its warning threshold', EXCEEDED: 'spent' } as const;

/** The burn-down: what the month had cost by each day's end, beside the budget and its warning line. */
export function BurnDownChart({ budget }: { budget: BudgetFieldsFragment }) {
  const days = budget.burnDown.map((d) => new Date(d.day));
  if (days.length === 0) return null;
  const spent = budget.burnDown.map((d) => d.spent);
  const warn = (budget.amountValue * budget.softPercent) / 100;
  // Small amounts (a few GPU-hours, cents) need their decimals on the axis.
  const top = Math.max(budget.amountValue, ...spent);
  return (
    <Box role="img" aria-label="Budget burn-down: spending this month by day" data-testid="budget-burn-down">
      <LineChart
        height={220}
        xAxis={[{ scaleType: 'time', data: days, valueFormatter: (d: Date) => dayjs(d).format('MMM D') }]}
        yAxis={[{ min: 0, valueFormatter: (v: number) => v.toLocaleString('en-US', { maximumFractionDigits: top < 10 ? 2 : 0 }) }]}
        series={[
          { data: spent, label: `Spent (${budget.unitLabel})`, showMark: days.length < 3, area: true },
          { data: days.map(() => budget.amountValue), label: 'Budget', showMark: false, color: '#d32f2f' },
          { data: days.map(() => warn), label: `Warning (${budget.softPercent}%)`, showMark: false, color: '#ed6c02' },
        ]}
        margin={{ top: 50, right: 20, bottom: 30, left: 60 }}
      />
    </Box>
  );
}

export interface BudgetChange {
  unit: BudgetUnit;
  amount: string;
  softPercent: number;
  hard: boolean;
  suspendBorrowed: boolean;
}

/** Checks the form's amount and warning percentage; a message, or the change to send. */
export function readBudgetForm(amount: string, softPercent: string): { error: string } | { amount: string; softPercent: number } {
  const a = amount.trim();
  if (!/^\d{1,12}(\.\d{1,6})?$/.test(a) || Number(a) <= 0) return { error: 'The amount is a positive number, e.g. 1500 or 250.5' };
  const p = Number(softPercent);
  if (!Number.isInteger(p) || p < 1 || p > 100) return { error: 'Warn at a whole percentage from 1 to 100' };
  return { amount: a, softPercent: p };
}

/** What the form edits of a stored budget: a change of it (a save, another admin's) resets the form; spending does not. */
export function budgetSettingsKey(budget: BudgetFieldsFragment | null | undefined): string {
  if (!budget) return '';
  return JSON.stringify([budget.unit, budget.amount, budget.softPercent, budget.hard, budget.suspendBorrowed]);
}

/**
 * A project's or tenant's monthly budget: status, spent and committed, the burn-down; with
 * `onSave`, a form to set or remove it (only for those who may). The page's live refetches
 * change the spending under a half-typed form; only a change of the stored settings resets it.
 */
export function BudgetCard({
  title,
  budget,
  onSave,
  onRemove,
}: {
  title: string;
  budget: BudgetFieldsFragment | null | undefined;
  onSave?: (change: BudgetChange) => Promise<string | null>;
  onRemove?: () => Promise<string | null>;
}) {
  const [unit, setUnit] = useState<BudgetUnit>(budget?.unit ?? 'CURRENCY');
  const [amount, setAmount] = useState(budget ? String(Number(budget.amount)) : '');
  const [softPercent, setSoftPercent] = useState(String(budget?.softPercent ?? 80));
  const [hard, setHard] = useState(budget?.hard ?? true);
  const [suspendBorrowed, setSuspendBorrowed] = useState(budget?.suspendBorrowed ?? false);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const settings = budgetSettingsKey(budget);
  useEffect(() => {
    setUnit(budget?.unit ?? 'CURRENCY');
    setAmount(budget ? String(Number(budget.amount)) : '');
    setSoftPercent(String(budget?.softPercent ?? 80));
    setHard(budget?.hard ?? true);
    setSuspendBorrowed(budget?.suspendBorrowed ?? false);
    // Keyed on the stored settings, not on the budget object, which each refetch replaces.
  }, [settings]);

  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (!onSave) return;
    const read = readBudgetForm(amount, softPercent);
    if ('error' in read) return setMessage({ ok: false, text: read.error });
    const error = await onSave({ unit, amount: read.amount, softPercent: read.softPercent, hard, suspendBorrowed: hard && suspendBorrowed });
    setMessage(error ? { ok: false, text: error } : { ok: true, text: 'Budget saved' });
  };
  const used = budget ? budget.spentValue + budget.committedValue : 0;
  const pct = budget && budget.amountValue > 0 ? (used / budget.amountValue) * 100 : 0;
  return (
    <Card variant="outlined" component="section" aria-label={title} sx={{ mt: 2 }}>
      <CardHeader
        title={title}
        titleTypographyProps={{ variant: 'h6', component: 'h2' }}
        subheader={
          budget
            ? `${dayjs(budget.periodStart).format('MMMM YYYY')} · ${
                budget.suspendBorrowed ? 'refuses new jobs and suspends borrowed work when spent' : budget.hard ? 'refuses new jobs when spent' : 'warns only'
              }`
            : undefined
        }
        action={
          budget && (
            <Chip
              sx={{ mt: 1 }}
              color={STATUS_COLOR[budget.status]}
              label={`${pct.toFixed(0)} % · ${STATUS_LABEL[budget.status]}`}
              data-testid="budget-status"
            />
          )
        }
      />
      <CardContent>
        {budget ? (
          <>
            <Typography>
              {budgetAmount(budget.spentValue, budget.unitLabel)} spent, {budgetAmount(budget.committedValue, budget.unitLabel)}{' '}
              committed by running work, of {budgetAmount(budget.amountValue, budget.unitLabel)}.
            </Typography>
            <LinearProgress
              variant="determinate"
              value={Math.min(100, pct)}
              color={STATUS_COLOR[budget.status]}
              sx={{ my: 1, height: 8, borderRadius: 1 }}
              aria-label="Budget used"
            />
            <BurnDownChart budget={budget} />
          </>
        ) : (
          <Typography color="text.secondary">No monthly budget set.</Typography>
        )}
        {onSave && (
          <Stack component="form" aria-label="Set the budget" direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ mt: 2 }} onSubmit={(e) => void save(e)}>
            <TextField size="small" label="Amount a month" value={amount} onChange={(e) => setAmount(e.target.value)} sx={{ width: 160 }} />
            <TextField select size="small" label="In" value={unit} onChange={(e) => setUnit(e.target.value as BudgetUnit)} sx={{ width: 150 }}>
              <MenuItem value="CURRENCY">currency</MenuItem>
              <MenuItem value="GPU_HOURS">GPU-hours</MenuItem>
            </TextField>
            <TextField size="small" label="Warn at (%)" value={softPercent} onChange={(e) => setSoftPercent(e.target.value)} sx={{ width: 120 }} />
            <FormControlLabel control={<Switch checked={hard} onChange={(e) => setHard(e.target.checked)} />} label="Refuse new jobs when spent" />
            <FormControlLabel
              control={<Switch checked={hard && suspendBorrowed} disabled={!hard} onChange={(e) => setSuspendBorrowed(e.target.checked)} />}
              label="and suspend borrowed work"
            />
            <Button type="submit" variant="outlined">
              Save budget
            </Button>
            {budget && onRemove && (
              <ConfirmButton
                color="error"
                title="Remove the monthly budget?"
                text="Spending is then neither limited nor warned about."
                confirmLabel="Remove budget"
                onConfirm={() =>
                  void onRemove().then((error) => setMessage(error ? { ok: false, text: error } : { ok: true, text: 'Budget removed' }))
                }
              >
                Remove
              </ConfirmButton>
            )}
          </Stack>
        )}
        {message && (
          <Alert severity={message.ok ? 'success' : 'error'} sx={{ mt: 1 }} onClose={() => setMessage(null)}>
            {message.text}
          </Alert>
        )}
      </CardContent>
    </Card>
  );
}
