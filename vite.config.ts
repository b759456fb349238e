import { fileURLToPath } from 'node:url';
import tailwindcss from '@tailwindcss/vite';
import { defineConfig } from 'vite';
import { clientWords } from './scripts/i18n/vite-plugin.js';

// Everything the entry imports statically goes into one chunk: left to itself the bundler splits
// the code the entry shares with the pages fetched later (lazyPage) into many small chunks, and
// their separate compression and glue cost more than the lazy pages save (docs/client.md, "Budget").
const ENTRY = fileURLToPath(new URL('./src/client/main.ts', import.meta.url));
let firstLoad: Set<string> | undefined;
type ModuleGraph = { getModuleInfo(id: string): { importedIds: readonly string[] } | null };
function firstLoadChunk(id: string, graph: ModuleGraph): string | null {
  if (!firstLoad) {
    const seen = new Set<string>();
    const walk = (module: string) => {
      if (seen.has(module)) return;
      seen.add(module);
      for (const imported of graph.getModuleInfo(module)?.importedIds ?? []) walk(imported);
    };
    walk(ENTRY);
    firstLoad = seen;
  }
  return firstLoad.has(id) ? 'app' : null;
}
// each build (the app's, the request layer's) walks its own graph
const freshGraph = { name: 'first-load-graph', buildStart: () => void (firstLoad = undefined) };

// The browser client: sources in src/client, built into public/ which the server serves;
// src/client/public (favicon, robots.txt) is copied as it is. Tailwind CSS 4 through its Vite
// plugin: the classes the sources use, and nothing else, end up in one stylesheet.
export default defineConfig({
  root: fileURLToPath(new URL('./src/client', import.meta.url)),
  publicDir: fileURLToPath(new URL('./src/client/public', import.meta.url)),
  plugins: [tailwindcss(), clientWords(fileURLToPath(new URL('.', import.meta.url))), freshGraph],
  // JSX/TSX through Vite's own transform (Oxc), with Preact's automatic runtime: no plugin needed
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('./public', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    // no inline assets: the page's CSP allows images from the server and data: URLs only for the QR code
    assetsInlineLimit: 0,
    rolldownOptions: { output: { codeSplitting: { groups: [{ name: firstLoadChunk, debugName: 'first-load' }] } } },
  },
  logLevel: 'warn',
});
