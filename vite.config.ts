import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The browser client: sources in src/client, built into public/ which the server serves.
export default defineConfig({
  root: fileURLToPath(new URL('./src/client', import.meta.url)),
  publicDir: false,
  build: {
    outDir: fileURLToPath(new URL('./public', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
  },
  logLevel: 'warn',
});
