// Builds the browser client into public/ and reports its gzipped sizes; fails over the budgets
// (docs/client.md, "Styling, themes, budgets"): JavaScript <= 80 KB, CSS <= 25 KB, gzipped, for the whole app.
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

await build({ configFile: new URL('../vite.config.ts', import.meta.url).pathname });

const assets = join('public', 'assets');
const sizes = {};
let totalJs = 0;
let totalCss = 0;
for (const name of await readdir(assets)) {
  if (name.endsWith('.map')) continue;
  const raw = await readFile(join(assets, name));
  const gz = gzipSync(raw, { level: 9 }).length;
  sizes[name] = { bytes: (await stat(join(assets, name))).size, gzip: gz };
  if (name.endsWith('.js')) totalJs += gz;
  if (name.endsWith('.css')) totalCss += gz;
}
// the request layer alone (event core + HTTP effects + codecs), as a library would ship it
const libDir = await mkdtemp(join(tmpdir(), 'request-layer-'));
await build({
  configFile: false,
  logLevel: 'warn',
  build: {
    outDir: libDir,
    emptyOutDir: true,
    minify: true,
    lib: { entry: new URL('../src/client/http.ts', import.meta.url).pathname, formats: ['es'], fileName: 'request-layer' },
  },
});
const layerJs = await readFile(
  join(
    libDir,
    (await readdir(libDir)).find((n) => n.endsWith('.js')),
  ),
);
const requestLayerGzip = gzipSync(layerJs, { level: 9 }).length;
await rm(libDir, { recursive: true, force: true });

const BUDGET = { js: 80 * 1024, css: 25 * 1024 };
await writeFile(
  join('public', 'bundle-sizes.json'),
  JSON.stringify({ totalJsGzip: totalJs, totalCssGzip: totalCss, requestLayerGzip, budget: BUDGET, files: sizes }, null, 2),
);
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
console.log(
  `client built: JS ${kb(totalJs)} gzipped (budget ${kb(BUDGET.js)}), CSS ${kb(totalCss)} gzipped (budget ${kb(BUDGET.css)}); the request layer alone ${kb(requestLayerGzip)}`,
);
const over = [totalJs > BUDGET.js && `JS ${kb(totalJs)} > ${kb(BUDGET.js)}`, totalCss > BUDGET.css && `CSS ${kb(totalCss)} > ${kb(BUDGET.css)}`].filter(
  Boolean,
);
if (over.length) {
  console.error(`the client is over its gzipped budget: ${over.join(', ')}`);
  process.exit(1);
}
