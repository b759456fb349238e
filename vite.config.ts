import { fileURLToPath } from 'node:url';
import tailwindcss from '@tailwindcss/vite';
import { defineConfig } from 'vite';
import { clientWords } from './scripts/i18n/vite-plugin.js';

// The browser client: sources in src/client, built into public/ which the server serves;
// src/client/public (favicon, robots.txt) is copied as it is. Tailwind CSS 4 through its Vite
// plugin: the classes the sources use, and nothing else, end up in one stylesheet.
export default defineConfig({
  root: fileURLToPath(new URL('./src/client', import.meta.url)),
  publicDir: fileURLToPath(new URL('./src/client/public', import.meta.url)),
  plugins: [tailwindcss(), clientWords(fileURLToPath(new URL('.', import.meta.url)))],
  // JSX/TSX through Vite's own transform (Oxc), with Preact's automatic runtime: no plugin needed
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('./public', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // no inline assets: the page's CSP allows images from the server and data: URLs only for the QR code
    assetsInlineLimit: 0,
  },
  logLevel: 'warn',
});
