// Builds the browser client into public/ and reports its gzipped sizes; fails over the budgets
// (docs/client.md, "Styling, themes, budgets"; docs/i18n.md, "The client's budget"): what a
// reader downloads before the first page shows (the entry's JavaScript and the words of one
// locale, the largest) <= 80 KB, CSS <= 25 KB, gzipped. Code fetched later (the operator's
// console, the WebAuthn library) and the whole app are reported beside it.
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

await build({ configFile: new URL('../vite.config.ts', import.meta.url).pathname });

const assets = join('public', 'assets');
const html = await readFile(join('public', 'index.html'), 'utf8');
/** the JavaScript the page loads at once: its module script and what it preloads */
const entryNames = new Set([...html.matchAll(/(?:src|href)="\/assets\/([^"]+\.js)"/g)].map((m) => m[1]));
const sizes = {};
let entryJs = 0;
let laterJs = 0;
let totalCss = 0;
const words = {};
for (const name of await readdir(assets)) {
  if (name.endsWith('.map')) continue;
  const raw = await readFile(join(assets, name));
  const gz = gzipSync(raw, { level: 9 }).length;
  sizes[name] = { bytes: (await stat(join(assets, name))).size, gzip: gz };
  const locale = name.match(/^words-([a-z]+)-/)?.[1];
  if (locale) words[locale] = gz;
  else if (name.endsWith('.js')) {
    if (entryNames.has(name)) entryJs += gz;
    else laterJs += gz;
  }
  if (name.endsWith('.css')) totalCss += gz;
}
const largestWords = Math.max(0, ...Object.values(words));
const firstLoad = entryJs + largestWords;
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
  JSON.stringify(
    {
      firstLoadJsGzip: firstLoad,
      entryJsGzip: entryJs,
      laterJsGzip: laterJs,
      wordsGzip: words,
      totalCssGzip: totalCss,
      requestLayerGzip,
      budget: BUDGET,
      files: sizes,
    },
    null,
    2,
  ),
);
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
console.log(
  `client built: first load JS ${kb(firstLoad)} gzipped (budget ${kb(BUDGET.js)}: the entry ${kb(entryJs)} and the largest locale's words ${kb(largestWords)}; ` +
    `words per locale ${Object.entries(words)
      .map(([l, n]) => `${l} ${kb(n)}`)
      .join(', ')}), fetched when needed ${kb(laterJs)}, the whole app with one locale ${kb(entryJs + laterJs + largestWords)}; ` +
    `CSS ${kb(totalCss)} gzipped (budget ${kb(BUDGET.css)}); the request layer alone ${kb(requestLayerGzip)}`,
);
const over = [
  firstLoad > BUDGET.js && `first load JS ${kb(firstLoad)} > ${kb(BUDGET.js)}`,
  totalCss > BUDGET.css && `CSS ${kb(totalCss)} > ${kb(BUDGET.css)}`,
].filter(Boolean);
if (over.length) {
  console.error(`the client is over its gzipped budget: ${over.join(', ')}`);
  process.exit(1);
}
