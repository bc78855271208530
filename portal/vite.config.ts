/// <reference types="vitest" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The API the dev server and `vite preview` proxy to (grus-api does not serve the built
// portal yet). GRUS_API_URL=http://127.0.0.1:8080 by default.
const api = process.env.GRUS_API_URL ?? 'http://127.0.0.1:8080';
const proxy = {
  '/graphql': { target: api, ws: true, changeOrigin: true },
  '/auth': { target: api, changeOrigin: true },
  '/api': { target: api, changeOrigin: true },
};

export default defineConfig({
  plugins: [react()],
  server: { proxy },
  preview: { proxy },
  // Pages are split (React.lazy); the largest chunks are the job page (CodeMirror) and the shell (MUI).
  build: { chunkSizeWarningLimit: 600 },
  test: {
    environment: 'jsdom',
    globals: true,
    setupFiles: ['./src/test/setup.ts'],
    css: false,
    testTimeout: 60000,
  },
});
