import { describe, expect, it } from 'vitest';
import { yamlToJobInput } from './jobInput';

// The job files shared with the CLI (`grus submit`, cli/tests/job_yaml.rs): both read each
// example into the JobInput stored next to it, or refuse it with the same field errors.
const files = import.meta.glob('../../../examples/jobs/**/*.{yaml,json}', {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;

const read = (path: string): string => {
  const text = files[path];
  if (text === undefined) throw new Error(`missing ${path}`);
  return text;
};

const yamls = Object.keys(files)
  .filter((p) => p.endsWith('.yaml'))
  .sort();

describe('examples/jobs', () => {
  it('finds the shared examples', () => {
    expect(yamls.filter((p) => !p.includes('/invalid/')).length).toBeGreaterThanOrEqual(3);
    expect(yamls.filter((p) => p.includes('/invalid/')).length).toBeGreaterThanOrEqual(2);
  });

  for (const path of yamls) {
    const stem = path.slice(0, -'.yaml'.length);
    if (path.includes('/invalid/')) {
      it(`${path} is refused with the CLI's field errors`, () => {
        const { input, errors } = yamlToJobInput(read(path));
        expect(input).toBeNull();
        expect(errors).toEqual(JSON.parse(read(`${stem}.errors.json`)));
      });
    } else {
      it(`${path} reads into the CLI's JobInput`, () => {
        const { input, errors } = yamlToJobInput(read(path));
        expect(errors).toEqual([]);
        expect(input).toEqual(JSON.parse(read(`${stem}.input.json`)));
      });
    }
  }
});
