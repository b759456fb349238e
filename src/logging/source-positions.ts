/**
 * TypeScript positions for the compiled server's code, read from the `.js.map` beside a file only
 * when a logged stack or a signal's line first needs it. `node --enable-source-maps` would do the
 * same for every frame, but it reads and keeps the map of every module at load, ours and
 * node_modules' (5–7 MB of resident memory on the embedded default, docs/performance.md
 * "footprint, round 3"), for what is needed when an error is logged. Under tsx or with the flag,
 * Node already knows the maps: they are used as they are.
 */
import { readFileSync } from 'node:fs';
import { findSourceMap, SourceMap } from 'node:module';
import { dirname, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SourcePosition {
  file: string;
  /** 1-based */
  line: number;
  /** 1-based */
  column: number;
}

interface LoadedMap {
  map: SourceMap;
  dir: string;
}

/** maps read so far (null: the file has none); cleared when full, as stacks name few files */
const loaded = new Map<string, LoadedMap | null>();
const MAX_LOADED = 256;

function pathOf(file: string): string {
  return file.startsWith('file://') ? fileURLToPath(file) : file;
}

function mapBeside(path: string): LoadedMap | null {
  let found = loaded.get(path);
  if (found !== undefined) return found;
  found = null;
  // the app's own compiled files only: a dependency's frames stay as they are
  if (path.endsWith('.js') && isAbsolute(path) && !path.includes('/node_modules/')) {
    try {
      found = { map: new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8'))), dir: dirname(path) };
    } catch {
      // no map (or not one we can read): the JS position stands
    }
  }
  if (loaded.size >= MAX_LOADED) loaded.clear();
  loaded.set(path, found);
  return found;
}

/** Where a 1-based `line`:`column` of `file` (a path or a file: URL) comes from, if a source map says. */
export function originalPosition(file: string, line: number, column: number): SourcePosition | undefined {
  let source: string | undefined;
  let entry: ReturnType<SourceMap['findEntry']> | undefined;
  let dir = '';
  try {
    const known = findSourceMap(file);
    if (known) {
      entry = known.findEntry(line - 1, column - 1);
    } else {
      const beside = mapBeside(pathOf(file));
      if (!beside) return undefined;
      entry = beside.map.findEntry(line - 1, column - 1);
      dir = beside.dir;
    }
  } catch {
    return undefined;
  }
  if (!entry || !('originalLine' in entry) || typeof entry.originalLine !== 'number') return undefined;
  source = entry.originalSource;
  if (source.startsWith('file://')) source = fileURLToPath(source);
  else if (dir && !isAbsolute(source)) source = resolve(dir, source);
  return { file: source, line: entry.originalLine + 1, column: entry.originalColumn + 1 };
}

// a frame's location: `/abs/file.js:12:5` or `file:///abs/file.js:12:5`
const FRAME_LOCATION = /((?:file:\/\/)?\/[^\s():]+\.js):(\d+):(\d+)/g;

/** A stack whose frames in the app's compiled files name their TypeScript lines instead. */
export function sourceStack(stack: string): string {
  if (!stack.includes('.js:')) return stack;
  return stack.replace(FRAME_LOCATION, (location, file: string, line: string, column: string) => {
    const original = originalPosition(file, Number(line), Number(column));
    return original ? `${original.file}:${original.line}:${original.column}` : location;
  });
}
