// The service page's actions: scale, set the request rate, delete. Each dialog is mounted only
// while open (its fields start from the service as it is then) and shows the server's answer:
// VALIDATION field errors under their fields, anything else above them.
import {
  Alert,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogContentText,
  DialogTitle,
  Stack,
  TextField,
} from '@mui/material';
import { useState } from 'react';
import type { FormEvent, ReactNode } from 'react';
import type { CombinedError } from 'urql';
import { errorText } from '../../components/states';
import type { FieldError } from '../../jobs/jobInput';
import { errorFor, parseIntField, serverFieldErrors } from '../../jobs/jobInput';

/** What an action answers: the mutation's error, if any. */
export type ActionResult = Promise<CombinedError | undefined>;

/** The server's field errors of `error`, or its whole text when it has none. */
function splitError(error: CombinedError): { fields: FieldError[]; text: string | null } {
  const fields = serverFieldErrors(error.graphQLErrors[0]?.extensions);
  return { fields, text: fields.length ? null : errorText(error) };
}

function ActionDialog({
  title,
  submit,
  busy,
  text,
  onClose,
  onSubmit,
  color = 'primary',
  children,
}: {
  title: string;
  submit: string;
  busy: boolean;
  text: string | null;
  onClose: () => void;
  onSubmit: () => void;
  color?: 'primary' | 'error';
  children: ReactNode;
}) {
  const id = `${title.replace(/\W+/g, '-').toLowerCase()}-title`;
  return (
    <Dialog open onClose={onClose} aria-labelledby={id} fullWidth maxWidth="sm">
      <form
        noValidate
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          onSubmit();
        }}
      >
        <DialogTitle id={id}>{title}</DialogTitle>
        <DialogContent>
          {text && (
            <Alert severity="error" sx={{ mb: 2 }}>
              {text}
            </Alert>
          )}
          {children}
        </DialogContent>
        <DialogActions>
          <Button onClick={onClose}>{color === 'error' ? 'Keep it' : 'Cancel'}</Button>
          <Button type="submit" variant="contained" color={color} disabled={busy}>
            {submit}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}

export interface ScaleValues {
  /** Absent: the count stays (or autoscaling moves it) within the new bounds. */
  replicas?: number;
  minReplicas: number;
  maxReplicas: number;
}

export function ScaleDialog({
  service,
  onScale,
  onClose,
}: {
  service: { name: string; desiredReplicas: number; minReplicas: number; maxReplicas: number; autoscaling?: unknown };
  onScale: (v: ScaleValues) => ActionResult;
  onClose: () => void;
}) {
  // The count when the dialog opened: the page re-reads the service every 10 s, and an
  // autoscaler's new count must not turn an edit of the bounds into a manual scale.
  const [initial] = useState(() => String(service.desiredReplicas));
  const [replicas, setReplicas] = useState(initial);
  const [min, setMin] = useState(String(service.minReplicas));
  const [max, setMax] = useState(String(service.maxReplicas));
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [text, setText] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const field = (name: string, hint?: string) => {
    const msg = errorFor(errors, name);
    return { error: !!msg, helperText: msg ?? hint };
  };

  const submit = async () => {
    const errs: FieldError[] = [];
    // The count is sent only when changed: new bounds alone keep it (clamped) or let the rule move it.
    const count = replicas.trim() === initial ? undefined : parseIntField(replicas, 'replicas', errs);
    const minReplicas = parseIntField(min, 'minReplicas', errs);
    const maxReplicas = parseIntField(max, 'maxReplicas', errs);
    if (minReplicas === undefined && !errorFor(errs, 'minReplicas')) errs.push({ field: 'minReplicas', message: 'required' });
    if (maxReplicas === undefined && !errorFor(errs, 'maxReplicas')) errs.push({ field: 'maxReplicas', message: 'required' });
    setErrors(errs);
    setText(null);
    if (errs.length || minReplicas === undefined || maxReplicas === undefined) return;
    setBusy(true);
    const error = await onScale({ ...(count !== undefined ? { replicas: count } : {}), minReplicas, maxReplicas });
    setBusy(false);
    if (!error) return onClose();
    const split = splitError(error);
    setErrors(split.fields);
    setText(split.text);
  };

  return (
    <ActionDialog title={`Scale ${service.name}`} submit="Scale" busy={busy} text={text} onClose={onClose} onSubmit={() => void submit()}>
      <Stack spacing={2} sx={{ pt: 1 }}>
        <TextField
          label="Replicas now"
          inputProps={{ inputMode: 'numeric' }}
          value={replicas}
          onChange={(e) => setReplicas(e.target.value)}
          {...field(
            'replicas',
            service.autoscaling ? 'the count to run now; autoscaling moves it again within the bounds' : 'the count to run and keep',
          )}
        />
        <TextField
          label="Min replicas"
          inputProps={{ inputMode: 'numeric' }}
          value={min}
          onChange={(e) => setMin(e.target.value)}
          {...field('minReplicas', 'never fewer; these are not preempted within the queue’s guarantee')}
        />
        <TextField
          label="Max replicas"
          inputProps={{ inputMode: 'numeric' }}
          value={max}
          onChange={(e) => setMax(e.target.value)}
          {...field('maxReplicas')}
        />
      </Stack>
    </ActionDialog>
  );
}

export function LoadDialog({
  service,
  onSetLoad,
  onClose,
}: {
  service: { name: string; requestsPerSecond?: number | null; autoscaling?: { metric: string } | null };
  onSetLoad: (requestsPerSecond: number) => ActionResult;
  onClose: () => void;
}) {
  const [rate, setRate] = useState(service.requestsPerSecond != null ? String(service.requestsPerSecond) : '');
  const [errors, setErrors] = useState<FieldError[]>([]);
  const [text, setText] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const msg = errorFor(errors, 'requestsPerSecond');

  const submit = async () => {
    const n = Number(rate.trim());
    if (rate.trim() === '' || !Number.isFinite(n)) {
      setErrors([{ field: 'requestsPerSecond', message: 'a number of requests per second' }]);
      return;
    }
    setErrors([]);
    setText(null);
    setBusy(true);
    const error = await onSetLoad(n);
    setBusy(false);
    if (!error) return onClose();
    const split = splitError(error);
    setErrors(split.fields);
    setText(split.text);
  };

  return (
    <ActionDialog title={`Set the load of ${service.name}`} submit="Set load" busy={busy} text={text} onClose={onClose} onSubmit={() => void submit()}>
      <DialogContentText sx={{ mb: 2 }}>
        The request rate the service gets — a synthetic load (in the sim) or what a metrics adapter reports — which request-rate
        (REQUEST_RATE) autoscaling reads. It stands until set again.
      </DialogContentText>
      {service.autoscaling?.metric !== 'REQUEST_RATE' && (
        <Alert severity="info" sx={{ mb: 2 }}>
          This service does not autoscale on request rate: the rate is recorded but moves no replicas.
        </Alert>
      )}
      <TextField
        label="Request rate (requests per second)"
        fullWidth
        autoFocus
        inputProps={{ inputMode: 'decimal' }}
        value={rate}
        onChange={(e) => setRate(e.target.value)}
        error={!!msg}
        helperText={msg ?? 'for the whole service, not per replica'}
      />
    </ActionDialog>
  );
}

export function DeleteDialog({
  service,
  onDelete,
  onClose,
}: {
  service: { name: string };
  onDelete: () => ActionResult;
  onClose: () => void;
}) {
  const [text, setText] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async () => {
    setBusy(true);
    const error = await onDelete();
    setBusy(false);
    if (error) setText(errorText(error));
    else onClose();
  };
  return (
    <ActionDialog
      title={`Delete ${service.name}?`}
      submit="Delete service"
      color="error"
      busy={busy}
      text={text}
      onClose={onClose}
      onSubmit={() => void submit()}
    >
      <DialogContentText>Every replica is stopped and the name is free again; this cannot be undone.</DialogContentText>
    </ActionDialog>
  );
}
