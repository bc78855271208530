import type { CodegenConfig } from '@graphql-codegen/cli';

// Operations live in `graphql(...)` calls in src/**/*.ts(x) (all of them in src/api/operations.ts).
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
