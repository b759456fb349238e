// Builds the browser client into public/ and reports its gzipped sizes (the budget is 80 KB).
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

await build({ configFile: new URL('../vite.config.ts', import.meta.url).pathname });

const assets = join('public', 'assets');
const sizes = {};
let totalJs = 0;
for (const name of await readdir(assets)) {
  if (name.endsWith('.map')) continue;
  const raw = await readFile(join(assets, name));
  const gz = gzipSync(raw, { level: 9 }).length;
  sizes[name] = { bytes: (await stat(join(assets, name))).size, gzip: gz };
  if (name.endsWith('.js')) totalJs += gz;
}
// the request layer alone (event core + HTTP effects + codecs), as a library would ship it
const libDir = await mkdtemp(join(tmpdir(), 'request-layer-'));
await build({
  configFile: false,
  logLevel: 'warn',
  build: {
    outDir: libDir, emptyOutDir: true, minify: true,
    lib: { entry: new URL('../src/client/http.ts', import.meta.url).pathname, formats: ['es'], fileName: 'request-layer' },
  },
});
const layerJs = await readFile(join(libDir, (await readdir(libDir)).find((n) => n.endsWith('.js'))));
const requestLayerGzip = gzipSync(layerJs, { level: 9 }).length;
await rm(libDir, { recursive: true, force: true });

await writeFile(join('public', 'bundle-sizes.json'), JSON.stringify({ totalJsGzip: totalJs, requestLayerGzip, files: sizes }, null, 2));
console.log(`client built: ${(totalJs / 1024).toFixed(1)} KB of JS gzipped; the request layer alone ${(requestLayerGzip / 1024).toFixed(1)} KB`);
if (totalJs > 80 * 1024) {
  console.error('the client JS is over its 80 KB gzipped budget');
  process.exit(1);
}
