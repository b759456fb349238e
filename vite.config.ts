import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The browser client: sources in src/client, built into public/ which the server serves;
// src/client/public (favicon, robots.txt) is copied as it is.
export default defineConfig({
  root: fileURLToPath(new URL('./src/client', import.meta.url)),
  publicDir: fileURLToPath(new URL('./src/client/public', import.meta.url)),
  // JSX/TSX through Vite's own transform (Oxc), with Preact's automatic runtime: no plugin needed
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('./public', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
  logLevel: 'warn',
});
