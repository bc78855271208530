import { describe, expect, it } from 'vitest';
import type { JobInput } from '../gql/graphql';
import { parseDuration } from './humantime';
import {
  emptyForm,
  formToJobInput,
  jobInputToForm,
  jobInputToYaml,
  serverFieldErrors,
  validateJobInput,
  yamlToJobInput,
  specToYaml,
} from './jobInput';

// DESIGN.md's example job, with a restart policy, env and max_runtime added.
const DESIGN_YAML = `
name: llama-finetune
project: vision            # project slug
queue: default
priority: high
preemptible: false
gang: { min_members: 4 }
policies:
  - { on: { task_succeeded: main }, do: complete_job }
  - { on: replica_failed, do: { restart_job: { max: 3 } } }
tasks:
  - name: main
    replicas: 4
    image: ghcr.io/example/train:1.2
    command: ["torchrun", "--nproc-per-node=8", "train.py"]
    resources: { gpus: 8, gpu_models: [A100-80GB, H100-80GB], cpu_milli: 32000, memory_mib: 262144 }
    topology: { scope: nvlink }
  - name: notebook-share
    replicas: 1
    image: jupyter/base
    env: { JUPYTER_TOKEN: abc }
    resources: { gpus: 1, gpu_milli: 250, cpu_milli: 2000, memory_mib: 8192 }
labels: { team: nlp, grus.io/sim-duration-s: "120" }
max_runtime: 2h
`;

const EXPECTED: JobInput = {
  name: 'llama-finetune',
  project: 'vision',
  queue: 'default',
  priority: 'high',
  preemptible: false,
  gang: { minMembers: 4 },
  policies: [
    { on: 'TASK_SUCCEEDED', task: 'main', do: 'COMPLETE_JOB' },
    { on: 'REPLICA_FAILED', do: 'RESTART_JOB', max: 3 },
  ],
  maxRuntime: '2h',
  labels: [
    { key: 'team', value: 'nlp' },
    { key: 'grus.io/sim-duration-s', value: '120' },
  ],
  tasks: [
    {
      name: 'main',
      replicas: 4,
      image: 'ghcr.io/example/train:1.2',
      command: ['torchrun', '--nproc-per-node=8', 'train.py'],
      resources: { gpus: 8, gpuModels: ['A100-80GB', 'H100-80GB'], cpuMilli: 32000, memoryMib: 262144 },
      topology: { scope: 'NVLINK' },
    },
    {
      name: 'notebook-share',
      replicas: 1,
      image: 'jupyter/base',
      env: [{ key: 'JUPYTER_TOKEN', value: 'abc' }],
      resources: { gpus: 1, gpuMilli: 250, cpuMilli: 2000, memoryMib: 8192 },
    },
  ],
};

describe('yamlToJobInput', () => {
  it("reads DESIGN.md's job YAML into the camelCase JobInput", () => {
    const { input, errors } = yamlToJobInput(DESIGN_YAML);
    expect(errors).toEqual([]);
    expect(input).toEqual(EXPECTED);
    expect(validateJobInput(input!)).toEqual([]);
  });

  it('reports syntax errors, unknown fields and wrong types', () => {
    expect(yamlToJobInput('name: [').errors[0]?.field).toBe('yaml');
    expect(yamlToJobInput('- a').errors[0]?.message).toMatch(/must be a map/);
    const { input, errors } = yamlToJobInput(
      'name: a\nproject: p\nnmae: x\ntasks:\n  - name: m\n    image: i\n    replicas: two\n    resources: { gpu: 1 }\n',
    );
    expect(input).toBeNull();
    expect(errors.map((e) => e.field)).toEqual(['nmae', 'tasks.0.replicas', 'tasks.0.resources.gpu']);
  });

  it('rejects malformed policies', () => {
    const { errors } = yamlToJobInput(
      'name: a\nproject: p\npolicies: [{ on: sometimes, do: nothing }]\ntasks: [{ name: m, image: i }]\n',
    );
    expect(errors.map((e) => e.field)).toEqual(['policies.0.on', 'policies.0.do']);
  });
});

describe('jobInputToYaml', () => {
  it('round-trips through YAML unchanged', () => {
    const yaml = jobInputToYaml(EXPECTED);
    expect(yaml).toContain('min_members: 4');
    expect(yaml).toContain('task_succeeded: main');
    expect(yaml).toContain('restart_job:');
    expect(yaml).toContain('scope: nvlink');
    const back = yamlToJobInput(yaml);
    expect(back.errors).toEqual([]);
    // `preemptible: false` is the default and is left out of the YAML.
    expect(back.input).toEqual({ ...EXPECTED, preemptible: undefined });
  });
});

describe('form <-> JobInput', () => {
  it('the form and the YAML editor produce the same JobInput', () => {
    const form = jobInputToForm(EXPECTED);
    expect(form.tasks[0]?.command).toBe('torchrun\n--nproc-per-node=8\ntrain.py');
    expect(form.labels).toBe('team=nlp\ngrus.io/sim-duration-s=120');
    const { input, errors } = formToJobInput(form);
    expect(errors).toEqual([]);
    expect(input).toEqual(EXPECTED);
    expect(yamlToJobInput(jobInputToYaml(input)).input).toEqual({ ...EXPECTED, preemptible: undefined });
  });

  it('marks non-numbers and lines that are not key=value', () => {
    const form = emptyForm('vision');
    form.name = 'train';
    form.labels = 'team';
    form.tasks[0]!.image = 'busybox';
    form.tasks[0]!.replicas = 'x';
    form.tasks[0]!.gpus = '1.5';
    const { errors } = formToJobInput(form);
    expect(errors.map((e) => e.field)).toEqual(['labels.0.key', 'tasks.0.replicas', 'tasks.0.resources.gpus']);
  });
});

describe('validateJobInput mirrors the server', () => {
  it('reports every bad field with the server field paths, in its order', () => {
    // job_input.rs's `reports_every_bad_field`.
    const task = (name: string) => ({ name, replicas: 2, image: 'busybox', resources: { gpus: 1 } });
    const input: JobInput = {
      name: 'Bad Name',
      project: 'p',
      priority: 'urgent',
      gang: { minMembers: 5 },
      maxRuntime: '2h',
      tasks: [{ ...task('main'), resources: { gpus: 2, gpuMilli: 250 } }, task('main')],
    };
    expect(validateJobInput(input).map((e) => e.field)).toEqual([
      'name',
      'priority',
      'tasks.0.resources.gpuMilli',
      'tasks.1.name',
      'gang.minMembers',
    ]);
  });

  it('a MIG profile goes without a share, GPU memory or more than one GPU', () => {
    // job_input.rs's `a_bad_mig_request_names_its_field` (the profile names are the server's).
    const mig = (resources: JobInput['tasks'][number]['resources']): JobInput => ({
      name: 'serve',
      project: 'p',
      tasks: [{ name: 'main', image: 'busybox', resources: { migProfile: '1g.10gb', ...resources } }],
    });
    expect(validateJobInput(mig({ gpus: 0 }))).toEqual([]);
    expect(validateJobInput(mig({ gpus: 2 })).map((e) => e.field)).toEqual(['tasks.0.resources.gpus']);
    expect(validateJobInput(mig({ gpus: 1, gpuMilli: 1000 })).map((e) => e.field)).toEqual([
      'tasks.0.resources.gpuMilli',
    ]);
    expect(validateJobInput(mig({ gpus: 1, gpuMemoryMib: 1 })).map((e) => e.field)).toEqual([
      'tasks.0.resources.gpuMemoryMib',
    ]);
    const form = jobInputToForm(mig({ gpus: 1 }));
    expect(form.tasks[0]?.migProfile).toBe('1g.10gb');
    expect(formToJobInput(form).input.tasks[0]?.resources.migProfile).toBe('1g.10gb');
  });

  it('checks durations, policies and keys', () => {
    const input: JobInput = {
      name: 'ok',
      project: 'p',
      maxRuntime: 'soon',
      policies: [{ on: 'TASK_FAILED', task: 'nope', do: 'RESTART_JOB' }],
      labels: [
        { key: 'a', value: '1' },
        { key: 'a', value: '2' },
      ],
      tasks: [{ name: 'm', image: ' ', resources: { gpus: 65 } }],
    };
    expect(validateJobInput(input).map((e) => e.field)).toEqual([
      'tasks.0.image',
      'tasks.0.resources.gpus',
      'policies.0.task',
      'policies.0.max',
      'maxRuntime',
      'labels.1.key',
    ]);
  });

  it('parses humantime durations', () => {
    expect(parseDuration('90m')).toBe(5400);
    expect(parseDuration('1h 30m')).toBe(5400);
    expect(parseDuration('2 hours')).toBe(7200);
    expect(parseDuration('500ms')).toBe(0.5);
    expect(parseDuration('later')).toBeNull();
    expect(parseDuration('')).toBeNull();
  });

  it('reads the VALIDATION extension of a server error', () => {
    expect(serverFieldErrors({ code: 'VALIDATION', fields: [{ field: 'name', message: 'bad' }] })).toEqual([
      { field: 'name', message: 'bad' },
    ]);
    expect(serverFieldErrors({ code: 'FORBIDDEN' })).toEqual([]);
  });
});

describe('specToYaml', () => {
  it('shows a stored spec as the YAML its submitter wrote, which the editor reads back', () => {
    const stored = {
      id: 0,
      name: 'gang-train',
      project: 'vision',
      queue: 'default',
      priority: 100,
      preemptible: false,
      may_preempt: true,
      gang: { min_members: 2 },
      elastic: null,
      policies: [],
      max_runtime_s: 7200,
      min_runtime_s: null,
      predicted_runtime_s: 1800,
      labels: { 'grus.io/sim-duration-s': '30' },
      node_selector: {},
      submitted_by: 'alice',
      submitted_at_ms: 1795844784420,
      tasks: [
        {
          name: 'main',
          replicas: 2,
          image: 'ghcr.io/example/train:1',
          command: [],
          env: {},
          resources: { gpus: 1, gpu_milli: null, gpu_memory_mib: null, gpu_models: [], mig_profile: null, cpu_milli: 0, memory_mib: 0 },
          topology: null,
        },
      ],
    };
    const text = specToYaml(stored, 'normal');
    for (const internal of ['id:', 'submitted_at_ms', 'submitted_by', 'may_preempt', 'node_selector', 'predicted_runtime_s', 'null', '[]', '{}']) {
      expect(text).not.toContain(internal);
    }
    expect(text).toContain('priority: normal');
    expect(text).toContain('max_runtime: 2h');
    const { input, errors } = yamlToJobInput(text);
    expect(errors).toEqual([]);
    expect(input).toMatchObject({
      name: 'gang-train',
      project: 'vision',
      queue: 'default',
      priority: 'normal',
      gang: { minMembers: 2 },
      maxRuntime: '2h',
      labels: [{ key: 'grus.io/sim-duration-s', value: '30' }],
      tasks: [{ name: 'main', replicas: 2, image: 'ghcr.io/example/train:1', resources: { gpus: 1 } }],
    });
  });
});
