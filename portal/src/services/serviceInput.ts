// The New service form's values -> GraphQL's `ServiceInput`, with the server's field paths
// (`maxReplicas`, `resources.gpus`, `autoscaling.target`, `rollout.maxSurge`) so VALIDATION
// errors from `applyService` land on the same fields. Like the CLI's service YAML, the client
// checks what it must to build the input (numbers are numbers) and a few obvious rules; ranges
// and min ≤ max are the server's (api/src/graphql/services.rs).
import type { ScalingMetric, ServiceInput } from '../gql/graphql';
import type { FieldError, ResourceForm } from '../jobs/jobInput';
import { formToResources, lines, parseIntField, parsePairs } from '../jobs/jobInput';
import { parseDuration } from '../jobs/humantime';

export interface ServiceForm extends ResourceForm {
  name: string;
  project: string;
  /** '' for the project's default queue. */
  queue: string;
  image: string;
  /** One argument per line. */
  command: string;
  /** `KEY=value`, one per line. */
  env: string;
  port: string;
  /** '' for no readiness check. */
  readinessPath: string;
  minReplicas: string;
  /** '' for `minReplicas`. */
  maxReplicas: string;
  autoscaling: boolean;
  metric: ScalingMetric;
  /** Requests per second per replica, or a GPU busy percentage: as the label says. */
  target: string;
  /** Humantime (`5m`). */
  scaleDownDelay: string;
  maxSurge: string;
  maxUnavailable: string;
}

export const emptyServiceForm = (project = ''): ServiceForm => ({
  name: '',
  project,
  queue: '',
  image: '',
  command: '',
  env: '',
  gpus: '1',
  gpuMilli: '',
  gpuMemoryMib: '',
  gpuModels: '',
  migProfile: '',
  cpuMilli: '',
  memoryMib: '',
  port: '8000',
  readinessPath: '',
  minReplicas: '1',
  maxReplicas: '',
  autoscaling: false,
  metric: 'REQUEST_RATE',
  target: '',
  scaleDownDelay: '5m',
  maxSurge: '1',
  maxUnavailable: '0',
});

/** The unit of an autoscaling target, as the form and the pages write it. */
export const TARGET_UNIT: Record<ScalingMetric, string> = {
  REQUEST_RATE: 'requests per second per replica',
  GPU_UTILIZATION: '% GPU busy (mean of its replicas)',
};

function parseNumberField(text: string, field: string, errs: FieldError[]): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  const n = Number(t);
  if (!Number.isFinite(n)) {
    errs.push({ field, message: 'must be a number' });
    return undefined;
  }
  return n;
}

const dnsLabel = (s: string) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(s);

export interface ServiceFormResult {
  input: ServiceInput;
  /** Fields that cannot be read or are plainly wrong; send nothing while there are any. */
  errors: FieldError[];
}

export function formToServiceInput(form: ServiceForm): ServiceFormResult {
  const errs: FieldError[] = [];
  const name = form.name.trim();
  if (!dnsLabel(name)) errs.push({ field: 'name', message: "must be a DNS label: lowercase letters, digits and '-', at most 63" });
  if (!form.project) errs.push({ field: 'project', message: 'required' });
  const image = form.image.trim();
  if (image === '') errs.push({ field: 'image', message: 'required' });
  const port = parseIntField(form.port, 'port', errs);
  if (port === undefined && !errs.some((e) => e.field === 'port')) errs.push({ field: 'port', message: 'required' });
  const input: ServiceInput = {
    name,
    project: form.project,
    image,
    port: port ?? 0,
    resources: formToResources(form, 'resources', errs),
    minReplicas: parseIntField(form.minReplicas, 'minReplicas', errs) ?? 1,
  };
  if (form.queue.trim()) input.queue = form.queue.trim();
  const maxReplicas = parseIntField(form.maxReplicas, 'maxReplicas', errs);
  if (maxReplicas !== undefined) input.maxReplicas = maxReplicas;
  const command = lines(form.command);
  if (command.length) input.command = command;
  const env = parsePairs(form.env, 'env', errs);
  if (env.length) input.env = env;
  if (form.readinessPath.trim()) input.readiness = { path: form.readinessPath.trim() };
  if (form.autoscaling) {
    const target = parseNumberField(form.target, 'autoscaling.target', errs);
    if (target === undefined && !errs.some((e) => e.field === 'autoscaling.target')) {
      errs.push({ field: 'autoscaling.target', message: 'required with autoscaling' });
    }
    const delay = form.scaleDownDelay.trim() || '5m';
    if (parseDuration(delay) === null) {
      errs.push({ field: 'autoscaling.scaleDownDelay', message: 'a duration such as 30s or 5m' });
    }
    input.autoscaling = { metric: form.metric, target: target ?? 0, scaleDownDelay: delay };
  }
  const maxSurge = parseIntField(form.maxSurge, 'rollout.maxSurge', errs);
  const maxUnavailable = parseIntField(form.maxUnavailable, 'rollout.maxUnavailable', errs);
  if (maxSurge !== undefined || maxUnavailable !== undefined) {
    input.rollout = { maxSurge: maxSurge ?? 1, maxUnavailable: maxUnavailable ?? 0 };
  }
  return { input, errors: errs };
}
