import type { CodegenConfig } from '@graphql-codegen/cli';

// Operations live in `graphql(...)` calls in src/**/*.ts(x). Queries written against fields the
// API does not have yet live in `*.planned.graphql` files, which are NOT listed here: add a
// page's file to `documents` (and move its query into the page's hook) once the schema has it.
const config: CodegenConfig = {
  schema: '../api/schema.graphql',
  documents: ['src/**/*.{ts,tsx}', '!src/gql/**/*'],
  ignoreNoDocuments: false,
  generates: {
    './src/gql/': {
      preset: 'client',
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { DateTime: 'string', JSON: 'unknown' },
        strictScalars: true,
      },
      presetConfig: { fragmentMasking: false },
    },
  },
};
export default config;
