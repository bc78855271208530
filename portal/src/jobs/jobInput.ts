// One conversion module for job submission: DESIGN.md's job YAML (snake_case) <-> GraphQL's
// `JobInput` (camelCase) <-> the Submit form's values, plus the client-side mirror of the
// server's validation (api/src/graphql/job_input.rs), with the same field paths
// (`tasks.0.resources.gpuMilli`) so server VALIDATION errors land on the same form fields.
import { isMap, isSeq, parseDocument, stringify } from 'yaml';
import type { JobInput, KeyValueInput, PolicyDo, PolicyInput, PolicyOn, ResourcesInput, Scope, TaskInput } from '../gql/graphql';
import { formatDuration, parseDuration } from './humantime';

export interface FieldError {
  field: string;
  message: string;
}

export const PRIORITY_CLASSES = ['low', 'normal', 'high', 'critical'] as const;
export const SCOPES: readonly Scope[] = ['ANY', 'NODE', 'NVLINK', 'RACK'];

// grus_protocol::limits: replicas of one task and of the whole job, tasks per job.
export const MAX_REPLICAS = 4096;
export const MAX_TASKS = 64;

const dnsLabel = (s: string) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(s);

// ---------------------------------------------------------------------------------------
// Validation (mirror of job_input.rs::validate; the server stays authoritative)
// ---------------------------------------------------------------------------------------

function checkPairs(list: readonly KeyValueInput[] | undefined, field: string, errs: FieldError[]) {
  const seen = new Set<string>();
  (list ?? []).forEach((kv, i) => {
    if (kv.key.length === 0 || kv.key.length > 253) {
      errs.push({ field: `${field}.${i}.key`, message: 'must be 1 to 253 characters' });
    } else if (seen.has(kv.key)) {
      errs.push({ field: `${field}.${i}.key`, message: 'duplicate key' });
    }
    seen.add(kv.key);
  });
}

export function validateJobInput(input: JobInput): FieldError[] {
  const errs: FieldError[] = [];
  const err = (field: string, message: string) => errs.push({ field, message });
  if (!dnsLabel(input.name)) {
    err('name', "must be a DNS label: lowercase letters, digits and '-', at most 63");
  }
  if (!input.project) err('project', 'required');
  const cls = input.priority ?? 'normal';
  if (!(PRIORITY_CLASSES as readonly string[]).includes(cls)) {
    err('priority', 'unknown priority class (low, normal, high, critical)');
  }
  if (input.tasks.length === 0) err('tasks', 'a job needs at least one task');
  else if (input.tasks.length > MAX_TASKS) err('tasks', `at most ${MAX_TASKS} tasks`);
  let totalReplicas = 0;
  input.tasks.forEach((t, i) => {
    const f = (n: string) => `tasks.${i}.${n}`;
    if (!dnsLabel(t.name)) err(f('name'), 'must be a DNS label');
    else if (input.tasks.slice(0, i).some((o) => o.name === t.name)) err(f('name'), 'duplicate task name');
    const replicas = t.replicas ?? 1;
    if (!Number.isInteger(replicas) || replicas < 1 || replicas > MAX_REPLICAS) err(f('replicas'), `must be 1 to ${MAX_REPLICAS}`);
    if (t.image.trim() === '') err(f('image'), 'required');
    const r = t.resources;
    const gpus = r.gpus ?? 0;
    if (!Number.isInteger(gpus) || gpus < 0 || gpus > 64) err(f('resources.gpus'), 'must be 0 to 64');
    if (r.gpuMilli != null) {
      if (r.gpuMilli < 1 || r.gpuMilli > 1000) err(f('resources.gpuMilli'), 'must be 1 to 1000');
      else if (r.gpuMilli < 1000 && gpus !== 1) err(f('resources.gpuMilli'), 'a fraction of a GPU needs gpus = 1');
    }
    if (r.gpuMemoryMib != null && r.gpuMemoryMib <= 0) err(f('resources.gpuMemoryMib'), 'must be positive');
    if ((r.cpuMilli ?? 0) < 0) err(f('resources.cpuMilli'), 'must not be negative');
    if ((r.memoryMib ?? 0) < 0) err(f('resources.memoryMib'), 'must not be negative');
    if ((r.gpuModels ?? []).some((m) => m === '' || m.includes('/'))) {
      err(f('resources.gpuModels'), "model names are non-empty and contain no '/'");
    }
    // Which profiles exist, and on which models, the server says (per field as well).
    if (r.migProfile) {
      if (gpus > 1) err(f('resources.gpus'), 'a MIG instance is one device: gpus must be 1 or left out');
      if (r.gpuMilli != null) err(f('resources.gpuMilli'), "not with migProfile: the profile fixes the instance's size");
      if (r.gpuMemoryMib != null) {
        err(f('resources.gpuMemoryMib'), "not with migProfile: the profile fixes the instance's memory");
      }
    }
    totalReplicas += Number.isInteger(replicas) && replicas > 0 ? replicas : 0;
  });
  if (totalReplicas > MAX_REPLICAS) err('tasks', `at most ${MAX_REPLICAS} replicas in all`);
  if (input.gang && (input.gang.minMembers < 1 || input.gang.minMembers > totalReplicas)) {
    err('gang.minMembers', "must be 1 to the job's total replicas");
  }
  if (input.elastic && (input.elastic.min < 1 || input.elastic.max < input.elastic.min)) {
    err('elastic', 'needs 1 <= min <= max');
  }
  if (input.workspace) {
    const w = input.workspace;
    const oneReplica = input.tasks.length === 1 && (input.tasks[0]?.replicas ?? 1) === 1;
    if (!oneReplica || input.gang || input.elastic) {
      err('workspace', 'a workspace is one task of one replica, without gang or elastic bounds');
    }
    const port = w.port ?? 8888;
    if (!Number.isInteger(port) || port < 1 || port > 65535) err('workspace.port', 'a port from 1 to 65535');
    const idle = parseDuration(w.idleTimeout ?? '30m');
    if (idle === null || idle < 10 || idle > 7 * 24 * 3600) {
      err('workspace.idleTimeout', 'a duration from 10s to 7d, such as 30m or 2h');
    }
  }
  (input.policies ?? []).forEach((p, i) => {
    if ((p.on === 'TASK_SUCCEEDED' || p.on === 'TASK_FAILED') && !input.tasks.some((t) => t.name === p.task)) {
      err(`policies.${i}.task`, 'must name a task of this job');
    }
    if (p.do === 'RESTART_JOB' && (p.max == null || p.max < 0)) err(`policies.${i}.max`, 'RESTART_JOB needs max >= 0');
  });
  if (input.maxRuntime != null) {
    const s = parseDuration(input.maxRuntime);
    if (s === null || s < 1) err('maxRuntime', 'a duration of at least 1s, like 90m or 2h');
  }
  checkPairs(input.labels, 'labels', errs);
  checkPairs(input.clusterSelector, 'clusterSelector', errs);
  (input.pools ?? []).forEach((p, i, all) => {
    if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(p)) {
      err(`pools.${i}`, "a node pool name: 1-63 lowercase letters, digits and '-'");
    } else if (all.indexOf(p) < i) err(`pools.${i}`, `pool ${p} is named twice`);
  });
  input.tasks.forEach((t, i) => checkPairs(t.env, `tasks.${i}.env`, errs));
  return errs;
}

// ---------------------------------------------------------------------------------------
// JobInput -> YAML
// ---------------------------------------------------------------------------------------

const toMap = (list: readonly KeyValueInput[] | undefined) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, kv.value]));

const lower = (s: string) => s.toLowerCase();

function policyToYaml(p: PolicyInput): Record<string, unknown> {
  const on: unknown =
    p.on === 'TASK_SUCCEEDED' || p.on === 'TASK_FAILED' ? { [lower(p.on)]: p.task ?? '' } : lower(p.on);
  const action: unknown = p.do === 'RESTART_JOB' ? { restart_job: { max: p.max ?? 0 } } : lower(p.do);
  return { on, do: action };
}

/** The job as DESIGN.md's YAML; fields at their defaults are left out. */
export function jobInputToYamlObject(input: JobInput): Record<string, unknown> {
  const out: Record<string, unknown> = { name: input.name, project: input.project };
  if (input.queue) out.queue = input.queue;
  if (input.priority) out.priority = input.priority;
  if (input.preemptible) out.preemptible = true;
  if (input.gang) out.gang = { min_members: input.gang.minMembers };
  if (input.elastic) out.elastic = { min: input.elastic.min, max: input.elastic.max };
  if (input.policies?.length) out.policies = input.policies.map(policyToYaml);
  if (input.maxRuntime) out.max_runtime = input.maxRuntime;
  if (input.workspace) {
    const w: Record<string, unknown> = {};
    if (input.workspace.port != null) w.port = input.workspace.port;
    if (input.workspace.idleTimeout != null) w.idle_timeout = input.workspace.idleTimeout;
    if (input.workspace.idleAction != null) w.idle_action = lower(input.workspace.idleAction);
    out.workspace = w;
  }
  if (input.checkpoint) {
    const c: Record<string, unknown> = {};
    if (input.checkpoint.httpPort != null) c.http_port = input.checkpoint.httpPort;
    if (input.checkpoint.httpPath != null) c.http_path = input.checkpoint.httpPath;
    out.checkpoint = c;
  }
  out.tasks = input.tasks.map((t) => {
    const task: Record<string, unknown> = { name: t.name, replicas: t.replicas ?? 1, image: t.image };
    if (t.command?.length) task.command = [...t.command];
    if (t.env?.length) task.env = toMap(t.env);
    const r = t.resources;
    const res: Record<string, unknown> = { gpus: r.gpus ?? 0 };
    if (r.gpuMilli != null) res.gpu_milli = r.gpuMilli;
    if (r.gpuMemoryMib != null) res.gpu_memory_mib = r.gpuMemoryMib;
    if (r.gpuModels?.length) res.gpu_models = [...r.gpuModels];
    if (r.migProfile) res.mig_profile = r.migProfile;
    if (r.cpuMilli) res.cpu_milli = r.cpuMilli;
    if (r.memoryMib) res.memory_mib = r.memoryMib;
    task.resources = res;
    if (t.topology) task.topology = { scope: lower(t.topology.scope) };
    return task;
  });
  if (input.labels?.length) out.labels = toMap(input.labels);
  if (input.clusterSelector?.length) out.cluster_selector = toMap(input.clusterSelector);
  if (input.pools?.length) out.pools = [...input.pools];
  return out;
}

export function jobInputToYaml(input: JobInput): string {
  return stringify(jobInputToYamlObject(input), { lineWidth: 0 });
}

/** Drops what says nothing: nulls, empty lists and maps (recursively). */
function pruned(v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = v.map(pruned).filter((x) => x !== undefined);
    return items.length ? items : undefined;
  }
  if (isObj(v)) {
    const entries = Object.entries(v)
      .map(([k, x]) => [k, pruned(x)] as const)
      .filter(([, x]) => x !== undefined);
    return entries.length ? Object.fromEntries(entries) : undefined;
  }
  return v === null ? undefined : v;
}

/**
 * A stored job's spec (the wire JobSpec JSON) as the job YAML its submitter wrote (DESIGN.md's
 * format, which the YAML editor reads back): the priority by its class, `max_runtime` as a
 * duration, without what the API adds (`id`, `submitted_by`, `submitted_at_ms`, derived
 * fields) or leaves empty.
 */
export function specToYaml(spec: unknown, priorityClass?: string): string {
  if (!isObj(spec)) return stringify(spec, { lineWidth: 0 });
  const out: Obj = {};
  for (const key of ['name', 'project', 'queue']) out[key] = spec[key];
  if (priorityClass) out.priority = priorityClass;
  if (spec.preemptible === true) out.preemptible = true;
  for (const key of ['gang', 'elastic', 'policies']) out[key] = spec[key];
  if (typeof spec.max_runtime_s === 'number') out.max_runtime = formatDuration(spec.max_runtime_s);
  for (const key of ['checkpoint', 'workspace', 'labels', 'pools']) out[key] = spec[key];
  if (Array.isArray(spec.tasks)) {
    out.tasks = spec.tasks.map((t) => {
      if (!isObj(t)) return t;
      const { resources, ...rest } = t;
      const res = isObj(resources) ? Object.fromEntries(Object.entries(resources).filter(([, x]) => x !== 0 && x !== null)) : resources;
      return { ...rest, resources: { gpus: isObj(resources) ? (resources.gpus ?? 0) : 0, ...(isObj(res) ? res : {}) } };
    });
  }
  return stringify(pruned(out) ?? {}, { lineWidth: 0 });
}

// ---------------------------------------------------------------------------------------
// YAML -> JobInput
// ---------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

class Reader {
  errors: FieldError[] = [];
  fail(field: string, message: string) {
    this.errors.push({ field, message });
  }
  keys(o: Obj, allowed: readonly string[], at: string) {
    for (const k of Object.keys(o)) {
      if (!allowed.includes(k)) this.fail(at ? `${at}.${k}` : k, `unknown field (expected one of ${allowed.join(', ')})`);
    }
  }
  str(v: unknown, field: string): string | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    this.fail(field, 'must be a string');
    return undefined;
  }
  int(v: unknown, field: string): number | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    this.fail(field, 'must be an integer');
    return undefined;
  }
  bool(v: unknown, field: string): boolean | undefined {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'boolean') return v;
    this.fail(field, 'must be true or false');
    return undefined;
  }
  strList(v: unknown, field: string): string[] | undefined {
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v)) {
      this.fail(field, 'must be a list');
      return undefined;
    }
    return v.map((x, i) => this.str(x, `${field}.${i}`) ?? '');
  }
  pairs(v: unknown, field: string): KeyValueInput[] | undefined {
    if (v === undefined || v === null) return undefined;
    if (!isObj(v)) {
      this.fail(field, 'must be a map of key: value');
      return undefined;
    }
    return Object.entries(v).map(([key, value]) => ({ key, value: this.str(value, `${field}.${key}`) ?? '' }));
  }
}

const POLICY_DO: Record<string, PolicyDo> = {
  complete_job: 'COMPLETE_JOB',
  abort_job: 'ABORT_JOB',
  restart_task: 'RESTART_TASK',
};

function readPolicy(r: Reader, v: unknown, at: string): PolicyInput | undefined {
  if (!isObj(v)) {
    r.fail(at, 'must be a map with on and do');
    return undefined;
  }
  r.keys(v, ['on', 'do'], at);
  let on: PolicyOn | undefined;
  let task: string | undefined;
  if (v.on === 'replica_failed') on = 'REPLICA_FAILED';
  else if (v.on === 'job_timeout') on = 'JOB_TIMEOUT';
  else if (isObj(v.on) && Object.keys(v.on).length === 1) {
    const [k, t] = Object.entries(v.on)[0] as [string, unknown];
    if (k === 'task_succeeded' || k === 'task_failed') {
      on = k === 'task_succeeded' ? 'TASK_SUCCEEDED' : 'TASK_FAILED';
      task = r.str(t, `${at}.task`);
    }
  }
  if (!on) {
    r.fail(`${at}.on`, 'one of { task_succeeded: TASK }, { task_failed: TASK }, replica_failed, job_timeout');
  }
  let action: PolicyDo | undefined;
  let max: number | undefined;
  if (typeof v.do === 'string') {
    action = POLICY_DO[v.do];
  } else if (isObj(v.do) && isObj(v.do.restart_job) && Object.keys(v.do).length === 1) {
    action = 'RESTART_JOB';
    max = r.int(v.do.restart_job.max, `${at}.max`);
  }
  if (!action) r.fail(`${at}.do`, 'one of complete_job, abort_job, { restart_job: { max: N } }, restart_task');
  if (!on || !action) return undefined;
  const p: PolicyInput = { on, do: action };
  if (task !== undefined) p.task = task;
  if (max !== undefined) p.max = max;
  return p;
}

function readTask(r: Reader, v: unknown, i: number): TaskInput | undefined {
  const at = `tasks.${i}`;
  if (!isObj(v)) {
    r.fail(at, 'must be a map');
    return undefined;
  }
  r.keys(v, ['name', 'replicas', 'image', 'command', 'env', 'resources', 'topology'], at);
  const task: TaskInput = {
    name: r.str(v.name, `${at}.name`) ?? '',
    replicas: r.int(v.replicas, `${at}.replicas`) ?? 1,
    image: r.str(v.image, `${at}.image`) ?? '',
    resources: { gpus: 0 },
  };
  const command = r.strList(v.command, `${at}.command`);
  if (command?.length) task.command = command;
  const env = r.pairs(v.env, `${at}.env`);
  if (env?.length) task.env = env;
  if (v.resources != null) {
    if (!isObj(v.resources)) r.fail(`${at}.resources`, 'must be a map');
    else {
      const res = v.resources;
      const rat = `${at}.resources`;
      r.keys(
        res,
        ['gpus', 'gpu_milli', 'gpu_memory_mib', 'gpu_models', 'mig_profile', 'cpu_milli', 'memory_mib'],
        rat,
      );
      task.resources.gpus = r.int(res.gpus, `${rat}.gpus`) ?? 0;
      const gpuMilli = r.int(res.gpu_milli, `${rat}.gpuMilli`);
      if (gpuMilli !== undefined) task.resources.gpuMilli = gpuMilli;
      const gpuMemoryMib = r.int(res.gpu_memory_mib, `${rat}.gpuMemoryMib`);
      if (gpuMemoryMib !== undefined) task.resources.gpuMemoryMib = gpuMemoryMib;
      const models = r.strList(res.gpu_models, `${rat}.gpuModels`);
      if (models?.length) task.resources.gpuModels = models;
      const mig = r.str(res.mig_profile, `${rat}.migProfile`);
      if (mig) task.resources.migProfile = mig;
      const cpu = r.int(res.cpu_milli, `${rat}.cpuMilli`);
      if (cpu) task.resources.cpuMilli = cpu;
      const mem = r.int(res.memory_mib, `${rat}.memoryMib`);
      if (mem) task.resources.memoryMib = mem;
    }
  }
  if (v.topology != null) {
    const scope = isObj(v.topology) ? r.str(v.topology.scope, `${at}.topology.scope`) : undefined;
    const up = scope?.toUpperCase() as Scope | undefined;
    if (up && SCOPES.includes(up)) task.topology = { scope: up };
    else r.fail(`${at}.topology`, 'must be { scope: any | node | nvlink | rack }');
  }
  return task;
}

export interface YamlResult {
  input: JobInput | null;
  /** Structural errors (YAML syntax, types, unknown fields); empty when `input` is set. */
  errors: FieldError[];
}

const TOP_KEYS = [
  'name',
  'project',
  'queue',
  'priority',
  'preemptible',
  'gang',
  'elastic',
  'policies',
  'max_runtime',
  'checkpoint',
  'workspace',
  'labels',
  'cluster_selector',
  'pools',
  'tasks',
];

/** Parses DESIGN.md's job YAML into a `JobInput` (no semantic validation: see validateJobInput). */
export function yamlToJobInput(text: string): YamlResult {
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    return {
      input: null,
      errors: doc.errors.map((e) => ({ field: 'yaml', message: e.message.split('\n')[0] ?? e.message })),
    };
  }
  if (!isMap(doc.contents)) {
    return { input: null, errors: [{ field: 'yaml', message: 'the document must be a map (name:, project:, tasks:, ...)' }] };
  }
  const v = doc.toJS() as Obj;
  const r = new Reader();
  r.keys(v, TOP_KEYS, '');
  const input: JobInput = { name: r.str(v.name, 'name') ?? '', project: r.str(v.project, 'project') ?? '', tasks: [] };
  const queue = r.str(v.queue, 'queue');
  if (queue !== undefined) input.queue = queue;
  const priority = r.str(v.priority, 'priority');
  if (priority !== undefined) input.priority = priority;
  const preemptible = r.bool(v.preemptible, 'preemptible');
  if (preemptible !== undefined) input.preemptible = preemptible;
  if (v.gang != null) {
    if (isObj(v.gang)) input.gang = { minMembers: r.int(v.gang.min_members, 'gang.minMembers') ?? 0 };
    else r.fail('gang', 'must be { min_members: N }');
  }
  if (v.elastic != null) {
    if (isObj(v.elastic)) {
      input.elastic = { min: r.int(v.elastic.min, 'elastic') ?? 0, max: r.int(v.elastic.max, 'elastic') ?? 0 };
    } else r.fail('elastic', 'must be { min: N, max: M }');
  }
  if (v.policies != null) {
    if (Array.isArray(v.policies)) {
      const ps = v.policies.map((p, i) => readPolicy(r, p, `policies.${i}`)).filter((p): p is PolicyInput => !!p);
      if (ps.length) input.policies = ps;
    } else r.fail('policies', 'must be a list');
  }
  const maxRuntime = r.str(v.max_runtime, 'maxRuntime');
  if (maxRuntime !== undefined) input.maxRuntime = maxRuntime;
  if (v.checkpoint != null) {
    if (isObj(v.checkpoint)) {
      const checkpoint: NonNullable<JobInput['checkpoint']> = {};
      const port = r.int(v.checkpoint.http_port, 'checkpoint.httpPort');
      if (port !== undefined) checkpoint.httpPort = port;
      const path = r.str(v.checkpoint.http_path, 'checkpoint.httpPath');
      if (path !== undefined) checkpoint.httpPath = path;
      input.checkpoint = checkpoint;
    } else r.fail('checkpoint', 'must be {} or { http_port: N, http_path: /path }');
  }
  if (v.workspace != null) {
    if (isObj(v.workspace)) {
      r.keys(v.workspace, ['port', 'idle_timeout', 'idle_action'], 'workspace');
      const workspace: NonNullable<JobInput['workspace']> = {};
      const port = r.int(v.workspace.port, 'workspace.port');
      if (port !== undefined) workspace.port = port;
      const idle = r.str(v.workspace.idle_timeout, 'workspace.idleTimeout');
      if (idle !== undefined) workspace.idleTimeout = idle;
      const action = r.str(v.workspace.idle_action, 'workspace.idleAction')?.toLowerCase();
      if (action === 'stop') workspace.idleAction = 'STOP';
      else if (action === 'suspend') workspace.idleAction = 'SUSPEND';
      else if (action !== undefined) r.fail('workspace.idleAction', 'must be stop or suspend');
      input.workspace = workspace;
    } else r.fail('workspace', 'must be { port: N, idle_timeout: 30m, idle_action: stop | suspend }');
  }
  const labels = r.pairs(v.labels, 'labels');
  if (labels?.length) input.labels = labels;
  const selector = r.pairs(v.cluster_selector, 'clusterSelector');
  if (selector?.length) input.clusterSelector = selector;
  const pools = r.strList(v.pools, 'pools');
  if (pools?.length) input.pools = pools;
  if (v.tasks == null) r.fail('tasks', 'a job needs at least one task');
  else if (!isSeq(doc.get('tasks'))) r.fail('tasks', 'must be a list');
  else {
    input.tasks = (v.tasks as unknown[]).map((t, i) => readTask(r, t, i)).filter((t): t is TaskInput => !!t);
  }
  if (r.errors.length > 0) return { input: null, errors: r.errors };
  return { input, errors: [] };
}

// ---------------------------------------------------------------------------------------
// Form values <-> JobInput
// ---------------------------------------------------------------------------------------

/** A task as the form edits it: text fields as typed. */
export interface TaskForm {
  name: string;
  replicas: string;
  image: string;
  /** One argument per line. */
  command: string;
  /** `KEY=value`, one per line. */
  env: string;
  gpus: string;
  /** Empty: whole GPUs. */
  gpuMilli: string;
  gpuMemoryMib: string;
  /** Comma separated. */
  gpuModels: string;
  /** A MIG profile (`1g.10gb`) instead of GPUs and a share; '' for none. */
  migProfile: string;
  cpuMilli: string;
  memoryMib: string;
  /** '' for none. */
  topology: Scope | '';
}

/** What one replica gets, as the forms edit it: a job's task, a service's replica. */
export type ResourceForm = Pick<TaskForm, 'gpus' | 'gpuMilli' | 'gpuMemoryMib' | 'gpuModels' | 'migProfile' | 'cpuMilli' | 'memoryMib'>;

export interface JobForm {
  name: string;
  project: string;
  /** '' for the project's default queue. */
  queue: string;
  priority: string;
  preemptible: boolean;
  gang: boolean;
  gangMinMembers: string;
  maxRuntime: string;
  /** An interactive workspace (one replica, a port, an idle rule). */
  workspace: boolean;
  workspacePort: string;
  /** Humantime, e.g. `30m`. */
  idleTimeout: string;
  idleAction: 'STOP' | 'SUSPEND';
  /** Node pools in order of preference, comma-separated; '' for any node. */
  pools: string;
  /** `key=value`, one per line. */
  labels: string;
  tasks: TaskForm[];
  /** What the form does not edit (edit in YAML), carried through unchanged. */
  policies: PolicyInput[];
  elastic: JobInput['elastic'];
  clusterSelector: KeyValueInput[];
}

export const emptyTask = (name = 'main'): TaskForm => ({
  name,
  replicas: '1',
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
  topology: '',
});

export const emptyForm = (project = ''): JobForm => ({
  name: '',
  project,
  queue: '',
  priority: 'normal',
  preemptible: false,
  gang: false,
  gangMinMembers: '',
  maxRuntime: '',
  workspace: false,
  workspacePort: '8888',
  idleTimeout: '30m',
  idleAction: 'STOP',
  pools: '',
  labels: '',
  tasks: [emptyTask()],
  policies: [],
  elastic: null,
  clusterSelector: [],
});

export const lines = (s: string) =>
  s
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');

export function parsePairs(text: string, field: string, errs: FieldError[]): KeyValueInput[] {
  return lines(text).map((l, i) => {
    const eq = l.indexOf('=');
    if (eq < 0) {
      errs.push({ field: `${field}.${i}.key`, message: `"${l}" is not key=value` });
      return { key: l, value: '' };
    }
    return { key: l.slice(0, eq).trim(), value: l.slice(eq + 1).trim() };
  });
}

export function parseIntField(text: string, field: string, errs: FieldError[]): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  if (!/^-?\d+$/.test(t)) {
    errs.push({ field, message: 'must be a whole number' });
    return undefined;
  }
  return Number(t);
}

/** The resources of one replica from the form; errors under `at` (`tasks.0.resources.gpus`). */
export function formToResources(r: ResourceForm, at: string, errs: FieldError[]): ResourcesInput {
  const out: ResourcesInput = { gpus: parseIntField(r.gpus, `${at}.gpus`, errs) ?? 0 };
  const gpuMilli = parseIntField(r.gpuMilli, `${at}.gpuMilli`, errs);
  if (gpuMilli !== undefined) out.gpuMilli = gpuMilli;
  const gpuMemoryMib = parseIntField(r.gpuMemoryMib, `${at}.gpuMemoryMib`, errs);
  if (gpuMemoryMib !== undefined) out.gpuMemoryMib = gpuMemoryMib;
  const models = r.gpuModels
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  if (models.length) out.gpuModels = models;
  if (r.migProfile.trim()) out.migProfile = r.migProfile.trim();
  const cpu = parseIntField(r.cpuMilli, `${at}.cpuMilli`, errs);
  if (cpu) out.cpuMilli = cpu;
  const mem = parseIntField(r.memoryMib, `${at}.memoryMib`, errs);
  if (mem) out.memoryMib = mem;
  return out;
}

export interface FormResult {
  input: JobInput;
  /** Fields that are not numbers or not key=value; the input holds defaults there. */
  errors: FieldError[];
}

export function formToJobInput(form: JobForm): FormResult {
  const errs: FieldError[] = [];
  const input: JobInput = { name: form.name.trim(), project: form.project, tasks: [] };
  if (form.queue.trim()) input.queue = form.queue.trim();
  if (form.priority) input.priority = form.priority;
  input.preemptible = form.preemptible;
  if (form.gang) input.gang = { minMembers: parseIntField(form.gangMinMembers, 'gang.minMembers', errs) ?? 0 };
  if (form.elastic) input.elastic = { ...form.elastic };
  if (form.policies.length) input.policies = form.policies.map((p) => ({ ...p }));
  if (form.maxRuntime.trim()) input.maxRuntime = form.maxRuntime.trim();
  if (form.workspace) {
    input.workspace = {
      port: parseIntField(form.workspacePort, 'workspace.port', errs) ?? 8888,
      idleTimeout: form.idleTimeout.trim() || '30m',
      idleAction: form.idleAction,
    };
  }
  const pools = form.pools
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (pools.length) input.pools = pools;
  const labels = parsePairs(form.labels, 'labels', errs);
  if (labels.length) input.labels = labels;
  if (form.clusterSelector.length) input.clusterSelector = form.clusterSelector.map((kv) => ({ ...kv }));
  input.tasks = form.tasks.map((t, i) => {
    const f = (n: string) => `tasks.${i}.${n}`;
    const task: TaskInput = {
      name: t.name.trim(),
      replicas: parseIntField(t.replicas, f('replicas'), errs) ?? 1,
      image: t.image.trim(),
      resources: formToResources(t, f('resources'), errs),
    };
    const command = lines(t.command);
    if (command.length) task.command = command;
    const env = parsePairs(t.env, f('env'), errs);
    if (env.length) task.env = env;
    if (t.topology) task.topology = { scope: t.topology };
    return task;
  });
  return { input, errors: errs };
}

const pairsText = (list: readonly KeyValueInput[] | undefined) =>
  (list ?? []).map((kv) => `${kv.key}=${kv.value}`).join('\n');
const num = (n: number | null | undefined) => (n == null ? '' : String(n));

export function jobInputToForm(input: JobInput): JobForm {
  return {
    name: input.name,
    project: input.project,
    queue: input.queue ?? '',
    priority: input.priority ?? 'normal',
    preemptible: input.preemptible ?? false,
    gang: !!input.gang,
    gangMinMembers: input.gang ? String(input.gang.minMembers) : '',
    maxRuntime: input.maxRuntime ?? '',
    workspace: !!input.workspace,
    workspacePort: String(input.workspace?.port ?? 8888),
    idleTimeout: input.workspace?.idleTimeout ?? '30m',
    idleAction: input.workspace?.idleAction ?? 'STOP',
    pools: (input.pools ?? []).join(', '),
    labels: pairsText(input.labels),
    tasks: input.tasks.map((t) => ({
      name: t.name,
      replicas: String(t.replicas ?? 1),
      image: t.image,
      command: (t.command ?? []).join('\n'),
      env: pairsText(t.env),
      gpus: String(t.resources.gpus ?? 0),
      gpuMilli: num(t.resources.gpuMilli),
      gpuMemoryMib: num(t.resources.gpuMemoryMib),
      gpuModels: (t.resources.gpuModels ?? []).join(', '),
      migProfile: t.resources.migProfile ?? '',
      cpuMilli: num(t.resources.cpuMilli || null),
      memoryMib: num(t.resources.memoryMib || null),
      topology: t.topology?.scope ?? '',
    })),
    policies: (input.policies ?? []).map((p) => ({ ...p })),
    elastic: input.elastic ?? null,
    clusterSelector: (input.clusterSelector ?? []).map((kv) => ({ ...kv })),
  };
}

/** The field's first error message, for a field path like `tasks.0.image` (or a prefix of it). */
export function errorFor(errors: readonly FieldError[], field: string): string | undefined {
  return errors.find((e) => e.field === field || e.field.startsWith(`${field}.`))?.message;
}

/** Server VALIDATION errors (`extensions.fields`) as FieldErrors, if the error carries them. */
export function serverFieldErrors(extensions: unknown): FieldError[] {
  if (!isObj(extensions) || !Array.isArray(extensions.fields)) return [];
  return extensions.fields.filter(isObj).map((f) => ({ field: String(f.field), message: String(f.message) }));
}
